"""The fault suite: each case names one fault and the outcome promptd guarantees, and checks it.

Short cases run with `make test`; long ones (tests/wire/faults_long/) with `make faults`. Faults
already covered elsewhere are listed in FAULTS_ELSEWHERE below, not tested twice; docs/operations.md
("Faults") is the table of all of them.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from conftest import Served

PY = sys.executable

# Faults whose outcome is already checked elsewhere: test file -> the tests that state them.
FAULTS_ELSEWHERE = {
    "assembly/test_assembly_wire.py": [
        "test_a_provider_that_never_returns_is_skipped_at_its_timeout_while_others_are_delivered_and_served",
        "test_a_command_that_ignores_sigterm_is_killed_with_its_group_on_timeout",
        "test_failing_missing_flooding_and_noisy_providers_are_contained",
        "test_a_command_leaving_a_background_child_does_not_outlive_its_provider",
        "test_a_host_that_never_answers_or_answers_late_is_skipped_and_the_late_answer_discarded",
        "test_a_symlink_in_place_of_the_session_folder_is_refused_and_the_marker_stays",
        "test_a_read_only_spill_directory_falls_back_to_the_marker",
        "test_spill_caps_refuse_and_report",
        "test_the_sweep_never_follows_a_folder_swapped_for_a_link",
        "test_a_spill_root_others_can_write_to_is_refused",
    ],
    "wire/test_process_exit.py": [
        "test_end_of_input_answers_what_finishes_in_time_cancels_the_rest_and_exits_zero",
        "test_sigterm_lets_a_request_finish_cancels_what_outlives_the_deadline_and_exits_zero",
        "test_exit_cancels_and_answers_every_running_request_and_ends_while_a_thread_renders",
        "test_a_handler_printing_to_stdout_and_a_child_doing_so_do_not_corrupt_the_stream",
    ],
    "transport/test_server_wire.py": [
        "test_a_late_client_answer_is_discarded_and_the_server_cancels_what_it_stopped_waiting_for",
    ],
    "rpc/test_connection.py": [
        "test_invalid_utf8_is_a_parse_error",
        "test_json_nested_ten_thousand_deep_is_refused_without_a_crash",
        "test_after_end_of_input_what_is_still_in_flight_is_answered",
    ],
    "wire/test_oversized_line_memory.py": ["test_memory_stays_bounded_while_a_huge_line_is_discarded"],
}


def test_the_faults_referenced_here_are_still_tested_where_they_are_said_to_be():
    here = Path(__file__).parents[1]  # tests/
    for name, tests in FAULTS_ELSEWHERE.items():
        source = (here / name).read_text("utf-8")
        for test in tests:
            assert f"def {test}(" in source, f"{name} no longer has {test}"


# ---- helpers -------------------------------------------------------------------------------------

QUIET_ENV = {
    "PROMPTD_REMINDERS__SESSION_METADATA": "false",
    "PROMPTD_REMINDERS__PROJECT_MEMORY": "false",
    "PROMPTD_REMINDERS__FILE_MODIFIED": "false",
    "PROMPTD_TODO_NUDGE__ENABLED": "false",
}


def quiet_env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {**QUIET_ENV, "PROMPTD_REMINDERS__SPILL_DIR": str(tmp_path / "spill"), **more}


def register(server: Served, name: str, kind: str = "static", key: str = "directive", **fields) -> None:
    server.call("providers/register", {"name": name, "kind": kind, "scope": "global", "key": key, **fields})


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie, dead but not yet reaped by whoever adopted it, is gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return not any(alive(pid) for pid in pids)


def wait_for_file(path: Path, seconds: float = 60.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text()
        time.sleep(0.02)
    raise TimeoutError(f"{path} was not written")


def grandchild_script(pids: Path) -> list[str]:
    """A shell that starts a sleeping grandchild, writes both pids, then waits for ever."""
    return ["/bin/sh", "-c", f'sleep 300 & echo "$$ $!" > {pids}.tmp; mv {pids}.tmp {pids}; wait']


linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


# ---- providers never outlive promptd ------------------------------------------------------------


@linux_only
def test_sigkill_of_promptd_mid_command_kills_the_command_and_its_grandchild(spawn, tmp_path):
    pids = tmp_path / "pids"
    server = spawn(env=quiet_env(tmp_path))
    register(server, "lingers", kind="command", argv=grandchild_script(pids), timeout_ms=60_000)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "reminder/assemble", "params": {"session": "s", "user_message": "hi"}})
    shell, grandchild = (int(p) for p in wait_for_file(pids).split())
    assert alive(shell) and alive(grandchild)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(60)
    assert gone_within([shell, grandchild], 60), "a provider process outlived promptd"


@linux_only
@pytest.mark.skipif(not Path("/usr/bin/setsid").exists(), reason="needs setsid(1)")
def test_a_host_killing_promptds_whole_process_group_still_ends_the_command_and_its_grandchild(tmp_path):
    """The warden leads a session of its own, so a kill of promptd's group does not reach it first."""
    pids = tmp_path / "pids"
    env = {**os.environ, "PROMPTD_LOG_LEVEL": "warning", **quiet_env(tmp_path)}
    server = Served(argv=["/usr/bin/setsid", PY, "-m", "promptd", "serve"], env=env)
    try:
        register(server, "lingers", kind="command", argv=grandchild_script(pids), timeout_ms=60_000)
        server.send({"jsonrpc": "2.0", "id": 1, "method": "reminder/assemble", "params": {"session": "s", "user_message": "hi"}})
        shell, grandchild = (int(p) for p in wait_for_file(pids).split())
        os.killpg(server.proc.pid, signal.SIGKILL)
        server.proc.wait(60)
        assert gone_within([shell, grandchild], 60), "a provider process outlived promptd's process group"
    finally:
        server.close()


@linux_only
@pytest.mark.parametrize("how", ["cancel", "exit", "sigterm", "stdin_closed", "sigint"])
def test_every_exit_path_kills_a_running_command_and_its_grandchild(spawn, tmp_path, how):
    """Cancel, exit, SIGTERM, SIGINT and end of input past the shutdown deadline (here 200 ms):
    the request is cancelled (answered -32800) and the command's group killed."""
    pids = tmp_path / "pids"
    server = spawn(env=quiet_env(tmp_path, PROMPTD_SHUTDOWN_DEADLINE_MS="200"))
    register(server, "lingers", kind="command", argv=grandchild_script(pids), timeout_ms=60_000)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "reminder/assemble", "params": {"session": "s", "user_message": "hi"}})
    shell, grandchild = (int(p) for p in wait_for_file(pids).split())
    if how == "cancel":
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}})
        assert server.read()["error"]["code"] == -32800
    elif how == "exit":
        server.send({"jsonrpc": "2.0", "method": "exit"})
    elif how == "sigterm":
        server.proc.send_signal(signal.SIGTERM)
    elif how == "sigint":
        server.proc.send_signal(signal.SIGINT)
    else:
        server.close_input()
        assert server.read(timeout=60)["error"]["code"] == -32800
    assert gone_within([shell, grandchild], 60), f"a provider process outlived {how}"
    if how != "cancel":
        assert server.proc.wait(60) is not None


# ---- no render outlives its deadline --------------------------------------------------------------

# Builds nothing, so no size bound stops it: only the CPU deadline does.
SPIN = "${% for i in range(100000) %}${% for j in range(100000) %}${% endfor %}${% endfor %}"


def custom(template: str) -> dict:
    return {"context": {"system_prompt": {"custom": template}}}


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.update(int(p) for p in (task / "children").read_text().split())
        except FileNotFoundError:
            continue  # a thread that ended while listed
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return b""  # a worker that ended (was killed) while listed


def workers_of(pid: int) -> set[int]:
    return {child for child in children(pid) if b"promptd.prompt.worker" in _cmdline(child)}


@pytest.fixture
def short_deadline(spawn):
    return spawn(env={"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "300"})


def test_a_custom_template_looping_past_its_cpu_deadline_is_answered_render_timeout_and_others_are_served(short_deadline):
    server = short_deadline
    server.send({"jsonrpc": "2.0", "id": "spin", "method": "prompt/render", "params": custom(SPIN)})
    server.send({"jsonrpc": "2.0", "id": "meanwhile", "method": "prompt/render", "params": {"context": {}}})
    assert server.read(timeout=60)["id"] == "meanwhile"
    error = server.read(timeout=60)["error"]
    assert (error["code"], error["data"]["kind"], error["data"]["template"], error["data"]["limit_ms"]) == (-32022, "render_timeout", "custom", 300)
    # The killed worker was replaced: the next custom render is served.
    assert server.call("prompt/render", custom("ok ${{ 1 + 1 }}"))["text"] == "ok 2"


def test_a_body_looping_past_its_deadline_is_stopped_too(short_deadline):
    reply = short_deadline.request("prompt/render", {"context": {"prompt_body": SPIN}}, timeout=60)
    assert reply["error"]["data"]["kind"] == "render_timeout" and reply["error"]["data"]["template"] == "body"


@linux_only
def test_a_host_rendering_only_shipped_templates_never_starts_a_render_worker(spawn):
    server = spawn()
    assert server.call("prompt/render", {})["template"] == "primary"
    assert server.call("prompt/render", {"context": {"audience": "subagent"}})["template"] == "subagent"
    assert workers_of(server.proc.pid) == set()


@linux_only
def test_cancelling_a_looping_custom_render_answers_it_cancelled_and_kills_the_work(spawn):
    server = spawn(env={"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "60000"})
    assert server.call("prompt/render", custom("warm ${{ 1 }}"))["text"] == "warm 1"
    before = workers_of(server.proc.pid)
    server.send({"jsonrpc": "2.0", "id": "spin", "method": "prompt/render", "params": custom(SPIN)})
    time.sleep(0.3)  # let the render start (the outcome holds either way)
    server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "spin"}})
    reply = server.read(timeout=60)
    assert reply["id"] == "spin" and reply["error"]["code"] == -32800
    assert gone_within(sorted(before), 60) or not (before & workers_of(server.proc.pid)), "the cancelled render kept running"
    assert server.call("prompt/render", custom("again ${{ 2 }}"))["text"] == "again 2"


@linux_only
def test_sigkill_of_promptd_mid_render_ends_the_render_worker(spawn):
    server = spawn()
    server.send({"jsonrpc": "2.0", "id": "spin", "method": "prompt/render", "params": custom(SPIN)})
    deadline = time.monotonic() + 60
    while not workers_of(server.proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = workers_of(server.proc.pid)
    assert workers
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(60)
    assert gone_within(sorted(workers), 60), "a render worker outlived promptd"


class SpyPool:
    """In place of the render worker's pool: records what would be sent to a worker."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def render(self, source, values, name, strict, **bounds):
        self.sent.append((name, source))
        return "body text"


def test_the_sealed_apply_patch_template_never_goes_to_the_worker_only_the_callers_body_does(monkeypatch):
    from support.rendering import render

    from promptd.prompt import worker
    from promptd.prompt.context import PromptContext

    pool = SpyPool()
    monkeypatch.setattr(worker, "pool", lambda: pool)
    context = PromptContext.model_validate({"system_prompt": "codex", "prompt_body": "the ${{ 'body' }}"})
    rendered = render(context, {})
    assert pool.sent == [("body", "the ${{ 'body' }}")]
    assert rendered.template == "apply_patch" and rendered.text.endswith("body text")


def test_the_shipped_primary_render_stays_in_process(monkeypatch):
    from support.rendering import render

    from promptd.prompt import worker
    from promptd.prompt.context import PromptContext

    pool = SpyPool()
    monkeypatch.setattr(worker, "pool", lambda: pool)
    assert render(PromptContext.model_validate({}), {}).template == "primary"
    assert pool.sent == []


def test_the_render_deadline_has_a_minimum(spawn):
    server = spawn(env={"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "10"})
    assert server.proc.wait(60) != 0


def test_the_render_deadline_has_a_ceiling(spawn):
    server = spawn(env={"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "600000"})
    assert server.proc.wait(60) != 0


# ---- a sealed template renders in-process, under the same deadline --------------------------------


def cpu_s(pid: int) -> float:
    """A process's CPU time so far (user + system), all its threads together."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def still_spinning(pid: int, seconds: float = 2.0) -> bool:
    """True when the process used more than a tenth of `seconds` of CPU over `seconds` (a loop
    left running uses about all of it; an idle promptd nearly none)."""
    before = cpu_s(pid)
    time.sleep(seconds)
    return cpu_s(pid) - before > seconds / 10


@pytest.fixture
def sealed_spin(tmp_path, spawn):
    """A promptd whose Primary is a sealed nested loop, sealed with the public shipped key."""
    from promptd.prompt import vault

    sealed = tmp_path / "spin.sealed"
    sealed.write_bytes(vault.seal(SPIN.encode(), vault.DEFAULT_KEY, "primary"))

    def make(timeout_ms: int) -> Served:
        env = {"PROMPTD_VAULT__KEY_SOURCE": "shipped", "PROMPTD_VAULT__TEMPLATES": json.dumps({"primary": str(sealed)}), "PROMPTD_PROMPT__RENDER_TIMEOUT_MS": str(timeout_ms)}
        return spawn(env=env)

    return make


@linux_only
@pytest.mark.serial
def test_a_sealed_template_looping_past_its_deadline_is_answered_render_timeout_and_stops(sealed_spin):
    server = sealed_spin(300)
    server.send({"jsonrpc": "2.0", "id": "spin", "method": "prompt/render", "params": {"context": {}}})
    server.send({"jsonrpc": "2.0", "id": "meanwhile", "method": "citation/strip", "params": {"text": "a"}})
    assert server.read(timeout=60)["id"] == "meanwhile"
    error = server.read(timeout=60)["error"]
    assert (error["code"], error["data"]["kind"], error["data"]["template"], error["data"]["limit_ms"]) == (-32022, "render_timeout", "primary", 300)
    assert not still_spinning(server.proc.pid), "the sealed render kept running after its answer"
    assert workers_of(server.proc.pid) == set()  # it never left promptd's process
    assert server.call("prompt/render", {"context": {"audience": "subagent"}}, timeout=60)["template"] == "subagent"


# Not serial: nothing in it is bounded by the clock (the deadline is a minute), and a loop left
# running takes far more than a tenth of a core however loaded the machine is.
@linux_only
def test_cancelling_a_looping_sealed_render_answers_it_cancelled_and_stops_it(sealed_spin):
    server = sealed_spin(60000)
    server.send({"jsonrpc": "2.0", "id": "spin", "method": "prompt/render", "params": {"context": {}}})
    time.sleep(0.5)  # let the render start (the outcome holds either way)
    server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "spin"}})
    reply = server.read(timeout=60)
    assert reply["id"] == "spin" and reply["error"]["code"] == -32800
    assert not still_spinning(server.proc.pid), "the cancelled sealed render kept running"
    assert server.call("citation/strip", {"text": "a"}, timeout=60) is not None


def test_an_in_process_render_is_stopped_at_its_deadline_and_the_thread_lives_on():
    from promptd.errors import RenderTimeout
    from promptd.prompt import worker
    from promptd.prompt.engine import Engine

    engine = Engine()
    with pytest.raises(RenderTimeout) as caught:
        worker.bounded(lambda: engine.render(SPIN, {}, "primary", cache=False), "primary", deadline_s=0.1)
    assert (caught.value.kind, caught.value.data) == ("render_timeout", {"template": "primary", "limit_ms": 100})
    assert worker.bounded(lambda: engine.render("ok ${{ 1 }}", {}, "p"), "p", deadline_s=0.1) == "ok 1"
    assert sum(range(3_000_000)) > 0  # no stop is left pending for this thread


def test_an_in_process_render_that_ends_as_its_deadline_passes_never_leaves_a_stop_behind():
    # Renders about as long as the deadline, so that the stop is raised around the moment each
    # one returns: whatever the moment, it is the render's answer, never an exception later.
    from promptd.errors import RenderTimeout
    from promptd.prompt import worker

    def spin(n: int) -> int:
        total = 0
        for i in range(n):
            total += i
        return total

    outcomes = set()
    for n in range(60):
        try:
            outcomes.add(worker.bounded(lambda: spin(200_000 + n * 20_000), "x", deadline_s=0.02) > 0)
        except RenderTimeout:
            outcomes.add("timeout")
        spin(10_000)
    time.sleep(worker.RESTOP_S * (worker.MAX_STOPS + 1))
    assert spin(2_000_000) > 0 and outcomes <= {True, "timeout"}


def test_a_cancelled_in_process_render_raises_cancelled():
    import threading

    from promptd.prompt import worker
    from promptd.prompt.engine import Engine

    cancel = worker.Cancellation()
    timer = threading.Timer(0.2, cancel.cancel)
    timer.start()
    with pytest.raises(worker.Cancelled):
        worker.bounded(lambda: Engine().render(SPIN, {}, "primary", cache=False), "primary", deadline_s=60, cancel=cancel)
    timer.join()


# ---- renders waiting for a worker hold no shared thread ---------------------------------------------


@linux_only
def test_renders_queued_beyond_the_worker_cap_leave_the_threads_to_a_file_provider(tmp_path, spawn):
    (tmp_path / "notes.md").write_text("from a file\n")
    server = spawn(env={"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "60000"})
    server.call("initialize", {"config": {"reminders": {"session_metadata": False}}}, timeout=60)
    server.call("providers/register", {"name": "notes", "kind": "file", "key": "file.notes", "scope": "global", "path": "notes.md"}, timeout=60)
    server.call("session/update", {"session": "s", "cwd": str(tmp_path)}, timeout=60)
    # More looping renders than asyncio's default executor has threads (min(32, cores + 4)).
    spins = [f"spin{n}" for n in range((os.cpu_count() or 1) + 6)]
    for ident in spins:
        server.send({"jsonrpc": "2.0", "id": ident, "method": "prompt/render", "params": custom(SPIN)})
    time.sleep(0.5)  # let them take what they take
    assembled = server.request("reminder/assemble", {"session": "s", "user_message": "x"}, timeout=60)
    for ident in spins:
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": ident}})
    assert assembled["result"]["skipped"] == [] and "from a file" in assembled["result"]["body"]
    assert {server.read(timeout=60)["error"]["code"] for _ in spins} == {-32800}


# ---- no render outgrows its memory or the worker cap ----------------------------------------------

# Python objects the budget counts one each (ints of a 100,000-item list) hold tens of bytes: the
# worker's memory limit, not the budget, is what stops this loop.
HUNGRY = "${% set ns = namespace(a=[]) %}${% for i in range(100000) %}${% set ns.a = [ns.a, range(100000) | list] %}${% endfor %}${{ 1 }}"
MEMORY_MB = 128


def vm_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


class PeakMemory:
    """Samples a process's peak resident size (VmHWM) until stopped, so the peak of a process
    that ends (a retired worker) is known too."""

    def __init__(self, pid: int) -> None:
        import threading

        self.pid, self.peak_kib, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak_kib = max(self.peak_kib, vm_kib(self.pid, "VmHWM"))
            except (OSError, LookupError):
                pass
            time.sleep(0.005)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_kib


@pytest.fixture
def small_memory(spawn):
    return spawn(env={"PROMPTD_PROMPT__RENDER_MEMORY_MB": str(MEMORY_MB), "PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "60000"})


@linux_only
def test_a_render_past_its_memory_limit_is_refused_security_and_its_worker_stays_under_the_limit(small_memory):
    server = small_memory
    assert server.call("prompt/render", custom("warm ${{ 1 }}"), timeout=60)["text"] == "warm 1"
    [worker] = workers_of(server.proc.pid)
    # The limit is the worker's size once started plus the budget; its size now is at least that.
    ceiling_kib = vm_kib(worker, "VmSize") + MEMORY_MB * 1024
    peak = PeakMemory(worker)
    reply = server.request("prompt/render", custom(HUNGRY), timeout=60)
    assert peak.stop() <= ceiling_kib
    assert (reply["error"]["code"], reply["error"]["data"]["kind"], reply["error"]["data"]["error"]) == (-32021, "template_render", "security")
    assert server.call("prompt/render", custom("after ${{ 2 }}"), timeout=60)["text"] == "after 2"


@linux_only
@pytest.mark.parametrize(
    "template",
    [
        "${% set ns = namespace(a=[]) %}${% for i in range(100000) %}${% set ns.a = ns.a + ['x' * 10000] %}${% endfor %}",
        "${% set ns = namespace(a=[]) %}${% set big = 'x' * 1000000 %}${% for i in range(100000) %}${% set ns.a = ns.a + [big[i:]] %}${% endfor %}",
        "${% set ns = namespace(a=[]) %}${% set big = 'x' * 1000000 %}${% for i in range(100000) %}${% set ns.a = ns.a + [big | list] %}${% endfor %}",
    ],
    ids=["namespace_of_new_texts", "namespace_of_slices", "namespace_of_lists"],
)
def test_a_namespace_keeping_large_values_is_refused_security_within_the_memory_limit(small_memory, template):
    server = small_memory
    assert server.call("prompt/render", custom("warm ${{ 1 }}"), timeout=60)["text"] == "warm 1"
    [worker] = workers_of(server.proc.pid)
    ceiling_kib = vm_kib(worker, "VmSize") + MEMORY_MB * 1024
    peak = PeakMemory(worker)
    reply = server.request("prompt/render", custom(template), timeout=60)
    assert peak.stop() <= ceiling_kib
    assert (reply["error"]["data"]["kind"], reply["error"]["data"]["error"]) == ("template_render", "security")


@linux_only
def test_renders_beyond_the_worker_cap_wait_their_turn_and_every_one_is_answered(spawn):
    from promptd.prompt.worker import KEEP_IDLE, MAX_RUNNING

    server = spawn(env={"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "300"})
    for n in range(12):
        server.send({"jsonrpc": "2.0", "id": n, "method": "prompt/render", "params": custom(SPIN)})
    most, answered = 0, []
    while len(answered) < 12:
        most = max(most, len(workers_of(server.proc.pid)))
        try:
            answered.append(server.read(timeout=0.05))
        except TimeoutError:
            continue
    assert sorted(reply["id"] for reply in answered) == list(range(12))
    assert all(reply["error"]["data"]["kind"] == "render_timeout" for reply in answered)
    assert most <= MAX_RUNNING + KEEP_IDLE


@linux_only
def test_a_cancelled_render_waiting_for_a_worker_stops_waiting(spawn):
    from promptd.prompt.worker import MAX_RUNNING

    server = spawn(env={"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "60000"})
    for n in range(MAX_RUNNING):
        server.send({"jsonrpc": "2.0", "id": f"spin{n}", "method": "prompt/render", "params": custom(SPIN)})
    server.send({"jsonrpc": "2.0", "id": "waiting", "method": "prompt/render", "params": custom("waits ${{ 1 }}")})
    time.sleep(0.3)  # the spins hold every slot until cancelled; the outcome holds either way
    server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "waiting"}})
    first = server.read(timeout=60)
    assert first["id"] == "waiting" and first["error"]["code"] == -32800
    for n in range(MAX_RUNNING):
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": f"spin{n}"}})
    assert {server.read(timeout=60)["error"]["code"] for _ in range(MAX_RUNNING)} == {-32800}
    assert server.call("prompt/render", custom("again ${{ 2 }}"), timeout=60)["text"] == "again 2"


# ---- the lint is bounded as a render is -------------------------------------------------------------


def large_template() -> str:
    """About 1.3 MB of real template text: more than 300 ms of CPU to lint."""
    from promptd.prompt.pipeline import shipped_source

    return (shipped_source("primary") + "\n") * 200


def test_a_lint_past_the_render_deadline_answers_render_timeout_and_others_are_served(short_deadline):
    server = short_deadline
    server.send({"jsonrpc": "2.0", "id": "lint", "method": "prompt/lint", "params": {"template": large_template()}})
    server.send({"jsonrpc": "2.0", "id": "meanwhile", "method": "prompt/render", "params": {"context": {}}})
    assert server.read(timeout=60)["id"] == "meanwhile"
    error = server.read(timeout=60)["error"]
    assert (error["code"], error["data"]["kind"]) == (-32022, "render_timeout")
    assert server.call("prompt/lint", {"template": "${{ os_name }}"}, timeout=60)["violations"] == []


@linux_only
def test_cancelling_a_lint_answers_it_cancelled_and_kills_its_worker(spawn):
    server = spawn(env={"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "60000"})
    assert server.call("prompt/lint", {"template": "${{ os_name }}"}, timeout=60)["violations"] == []
    before = workers_of(server.proc.pid)
    assert before, "the lint ran in promptd's own process"
    server.send({"jsonrpc": "2.0", "id": "lint", "method": "prompt/lint", "params": {"template": large_template()}})
    time.sleep(0.3)
    server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "lint"}})
    reply = server.read(timeout=60)
    assert reply["id"] == "lint" and reply["error"]["code"] == -32800
    assert gone_within(sorted(before), 60) or not (before & workers_of(server.proc.pid)), "the cancelled lint kept running"


# ---- the worker's stderr is promptd's log: JSON lines only -----------------------------------------

NESTED_FOR = "".join(f"${{% for i{n} in [1] %}}" for n in range(25)) + "x" + "${% endfor %}" * 25
CHAINED_FILTERS = "${{ 'a'" + " | lower" * 300 + " }}"
NESTED_PARENTHESES = "${{ " + "(" * 200 + "1" + ")" * 200 + " }}"


def test_templates_that_break_the_compiler_answer_template_syntax_and_stderr_stays_json_lines(spawn):
    server = spawn(env={"PROMPTD_LOG_LEVEL": "debug"})
    for template in (NESTED_FOR, CHAINED_FILTERS, NESTED_PARENTHESES):
        for params in (custom(template), {"context": {"prompt_body": template}}):
            error = server.request("prompt/render", params, timeout=60)["error"]
            assert (error["code"], error["data"]["kind"]) == (-32020, "template_syntax")
        assert [v["kind"] for v in server.call("prompt/lint", {"template": template}, timeout=60)["violations"]] == ["syntax"]
    assert server.call("prompt/render", custom("ok ${{ 1 + 1 }}"), timeout=60)["text"] == "ok 2"
    server.close()
    for line in server.stderr_text().splitlines():
        assert isinstance(json.loads(line), dict), line


def test_a_worker_fed_a_broken_job_answers_it_and_writes_only_json_lines_to_stderr():
    import struct
    import subprocess

    import orjson

    worker = subprocess.Popen([PY, "-m", "promptd.prompt.worker", str(os.getpid())], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    header = struct.Struct(">I")

    def read() -> dict:
        (size,) = header.unpack(worker.stdout.read(header.size))
        return orjson.loads(worker.stdout.read(size))

    def send(data: bytes) -> None:
        worker.stdin.write(header.pack(len(data)) + data)
        worker.stdin.flush()

    try:
        assert read() == {"ready": True}
        send(orjson.dumps({"name": "custom"}))  # no source: a fault of the job itself
        assert read()["error"]["type"] == "TemplateRender"
        send(b"not json")  # a fault of the loop: the worker ends, with a log line, not a traceback
        assert worker.wait(60) != 0
        lines = worker.stderr.read().decode().splitlines()
    finally:
        worker.kill()
        worker.wait()
    assert lines and all(json.loads(line)["level"] == "error" for line in lines)
    assert not any("Traceback" in line for line in lines)


# ---- providers that misbehave -------------------------------------------------------------------


def test_a_provider_printing_invalid_utf8_is_delivered_with_replacement_characters(spawn, tmp_path):
    server = spawn(env=quiet_env(tmp_path))
    register(server, "bytes", kind="command", argv=[PY, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe end')"])
    result = server.call("reminder/assemble", {"session": "s", "user_message": "hi"}, timeout=60)
    assert "ok \ufffd\ufffd end" in result["body"]


@linux_only
@pytest.mark.parametrize("timeout_ms", [60_000, 1500], ids=["command_exits", "command_times_out"])
def test_a_child_that_detaches_from_the_group_is_killed_when_its_provider_ends(spawn, tmp_path, timeout_ms):
    """A double fork (the grandchild is adopted by init, as a daemon would be) stays in the group,
    and the group is killed. A child that also calls setsid leaves the group: that one is not
    tracked (docs/operations.md)."""
    pid_file = tmp_path / "daemon"
    daemon = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        f"        open({str(pid_file)!r} + '.tmp', 'w').write(str(os.getpid()) + '\\n'); os.rename({str(pid_file)!r} + '.tmp', {str(pid_file)!r})\n"
        "        os.close(1); time.sleep(300)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        f"while not os.path.exists({str(pid_file)!r}): time.sleep(0.01)\n"
        "print('daemon started', flush=True)\n" + ("time.sleep(300)\n" if timeout_ms < 60_000 else "")
    )
    server = spawn(env=quiet_env(tmp_path))
    register(server, "daemonizes", kind="command", argv=[PY, "-c", daemon], timeout_ms=timeout_ms)
    result = server.call("reminder/assemble", {"session": "s", "user_message": "hi"}, timeout=60)
    if timeout_ms < 60_000:
        assert result["skipped"][0]["reason"] == "timeout"
    else:
        assert "daemon started" in result["body"]
    assert gone_within([int(wait_for_file(pid_file))], 10), "a detached child outlived its provider"


# ---- the host misbehaves ------------------------------------------------------------------------


def test_a_host_closing_stdin_mid_callback_gets_its_request_answered_and_promptd_exits_zero(spawn, tmp_path):
    server = spawn(env=quiet_env(tmp_path))
    server.call("initialize", {"capabilities": {"host_providers": True}})
    register(server, "editor", kind="host", timeout_ms=60_000)
    server.send({"jsonrpc": "2.0", "id": "a", "method": "reminder/assemble", "params": {"session": "h", "user_message": "x"}})
    assert server.read()["method"] == "provider/produce"
    server.close_input()
    frames = []
    while True:
        try:
            frames.append(server.read(timeout=60))
        except EOFError:
            break
    answer = next(f for f in frames if f.get("id") == "a")
    assert answer["result"]["skipped"][0]["provider"] == "editor"
    assert server.proc.wait(60) == 0


def test_stdin_closed_mid_batch_answers_the_whole_batch_then_exits_zero(testserver):
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "test/sleep", "params": {"ms": 500, "tag": "t"}},
        {"jsonrpc": "2.0", "id": 2, "method": "reminder/keys"},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such"},
    ]
    testserver.send(batch)
    testserver.close_input()
    answers = testserver.read(timeout=60)
    assert sorted(a["id"] for a in answers) == [1, 2, 3]
    assert testserver.proc.wait(60) == 0


def close_stdout_and_keep_writing(server: Served) -> None:
    server.close_output()
    for n in range(2, 20):
        try:
            server.send({"jsonrpc": "2.0", "id": n, "method": "reminder/keys"})
        except (BrokenPipeError, OSError):
            return
        time.sleep(0.02)


def test_stdout_closed_by_the_host_then_stdin_ends_promptd_quietly(testserver):
    assert testserver.settled(30)
    testserver.send({"jsonrpc": "2.0", "id": 1, "method": "test/sleep", "params": {"ms": 300, "tag": "t"}})
    close_stdout_and_keep_writing(testserver)
    try:
        testserver.close_input()
    except BrokenPipeError:
        pass  # promptd ended on the closed stdout already
    assert testserver.proc.wait(60) == 0
    assert "Traceback" not in testserver.stderr_text()


def test_stdout_closed_by_the_host_alone_ends_promptd(testserver):
    assert testserver.settled(30)
    close_stdout_and_keep_writing(testserver)
    assert testserver.proc.wait(60) == 0
    assert "Traceback" not in testserver.stderr_text()


def sigint_mid_request(server: Served) -> dict:
    assert server.settled(30)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "test/sleep", "params": {"ms": 2000, "tag": "t"}})
    time.sleep(0.2)
    server.proc.send_signal(signal.SIGINT)
    return server.read(timeout=60)


def test_sigint_mid_request_answers_the_request_and_ends_promptd(testserver):
    reply = sigint_mid_request(testserver)
    assert reply["id"] == 1 and ("result" in reply or reply["error"]["code"] == -32800)
    assert testserver.proc.wait(60) is not None


def test_sigint_ends_promptd_like_sigterm_with_status_zero_and_no_traceback(testserver):
    sigint_mid_request(testserver)
    assert testserver.proc.wait(60) == 0
    assert "Traceback" not in testserver.stderr_text()


# ---- the spill directory misbehaves -------------------------------------------------------------


def spill_result(server: Served, session: str = "s") -> dict:
    register(server, "huge", text="z" * 5000)
    return server.call("reminder/assemble", {"session": session, "user_message": "hi", "budget": 300}, timeout=60)


def test_a_spill_root_replaced_by_a_symlink_is_refused_and_the_marker_stays(spawn, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "spill").symlink_to(elsewhere)
    result = spill_result(spawn(env=quiet_env(tmp_path)))
    assert result["spill"] is None and result["spill_failure"] == "symlink"
    assert "[truncated: showing" in result["body"] and list(elsewhere.iterdir()) == []


def test_a_full_spill_store_refuses_with_total_cap_and_the_marker_stays(spawn, tmp_path):
    result = spill_result(spawn(env=quiet_env(tmp_path, PROMPTD_REMINDERS__SPILL_MAX_TOTAL_BYTES="1000")))
    assert result["spill"] is None and result["spill_failure"] == "total_cap"
    assert "[truncated: showing" in result["body"]


def test_a_spill_file_removed_while_the_store_is_measured_is_not_an_error(tmp_path, monkeypatch):
    """The sweep (another thread) may delete a file between listing and stat: the save goes on."""
    from promptd.assembly import spill as spill_module
    from promptd.config import RemindersConfig

    store = spill_module.SpillStore(RemindersConfig(spill_dir=str(tmp_path / "spill")))
    store.save("s", "first")
    real_scandir = os.scandir

    class Vanishing:
        def __init__(self, entry):
            self.entry = entry

        def __getattr__(self, name):
            return getattr(self.entry, name)

        def is_file(self, follow_symlinks=True):
            return True

        def stat(self, follow_symlinks=True):
            raise FileNotFoundError(self.entry.name)

    class Listing:
        def __init__(self, fd):
            self.inner = real_scandir(fd)

        def __enter__(self):
            return (Vanishing(e) if e.is_file(follow_symlinks=False) else e for e in self.inner)

        def __exit__(self, *exc):
            self.inner.close()

        def __iter__(self):
            return self.__enter__()

    # Descriptor listings (what the store measures) report every file as gone by the time of stat.
    monkeypatch.setattr(spill_module.os, "scandir", lambda fd: Listing(fd) if isinstance(fd, int) else real_scandir(fd))
    saved = store.save("s", "second")
    assert Path(saved.path).read_text() == "second"


def test_a_session_folder_made_unreadable_is_a_spill_failure_not_an_internal_error(tmp_path, monkeypatch):
    from promptd.assembly import spill as spill_module
    from promptd.config import RemindersConfig

    store = spill_module.SpillStore(RemindersConfig(spill_dir=str(tmp_path / "spill")))
    store.save("s", "first")

    def unreadable(fd):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(spill_module, "folder_bytes", unreadable)
    with pytest.raises(spill_module.SpillFailed) as failed:
        store.save("s", "second")
    assert failed.value.reason == "unwritable"


@linux_only
def test_a_command_runs_with_a_parent_death_signal_of_sigkill(spawn, tmp_path):
    if not any(os.access(f"{d}/setpriv", os.X_OK) for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin")):
        pytest.skip("no setpriv: the warden alone covers promptd's death (docs/operations.md)")
    probe = "import ctypes; v = ctypes.c_int(); ctypes.CDLL(None).prctl(2, ctypes.byref(v), 0, 0, 0); print('pdeathsig', v.value)"
    server = spawn(env=quiet_env(tmp_path))
    register(server, "probe", kind="command", argv=[PY, "-c", probe])
    body = server.call("reminder/assemble", {"session": "s", "user_message": "hi"}, timeout=60)["body"]
    assert f"pdeathsig {int(signal.SIGKILL)}" in body


# ---- the wire fuzz, a short seeded run (the long one: `make fuzz`) -------------------------------


def fuzz_module():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import fuzz

    return fuzz


def test_a_short_seeded_wire_fuzz_gets_one_answer_per_request_no_internal_error_and_a_live_server():
    result = fuzz_module().run(1500, seed=7)
    assert result["ok"], {k: v for k, v in result.items() if k != "examples"} | {"examples": result["examples"]}
    assert result["tracked_ids"] > 1000 and result["unanswered"] == 0 and result["answered_twice"] == 0


def test_an_integer_of_hundreds_of_digits_is_read_exactly_and_one_over_the_digit_bound_is_a_parse_error(shared_served):
    shared_served.send_raw(b'{"jsonrpc":"2.0","id":"big","method":"content/sanitize_value","params":{"value":' + b"1" * 400 + b"}}\n")
    assert shared_served.read_line() == b'{"jsonrpc":"2.0","id":"big","result":{"value":' + b"1" * 400 + b',"neutralized":0,"changes":[]}}'
    shared_served.send_raw(b'{"jsonrpc":"2.0","id":"big","method":"content/sanitize_value","params":{"value":' + b"1" * 4301 + b"}}\n")
    reply = shared_served.read()
    assert reply["id"] is None and reply["error"]["code"] == -32700


@linux_only
def test_warm_worker_starts_a_render_worker_at_initialize(spawn):
    server = spawn()
    server.call("initialize", {"config": {"prompt": {"warm_worker": True}}}, timeout=60)
    deadline = time.monotonic() + 60
    while not workers_of(server.proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workers_of(server.proc.pid)
    # And without it, none is started until a caller's template needs one.
    cold = spawn()
    cold.call("initialize", {}, timeout=60)
    assert cold.call("prompt/render", {"context": {}}, timeout=60)["template"] == "primary"
    assert not workers_of(cold.proc.pid)
