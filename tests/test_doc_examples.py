"""The documentation, checked: every shell command shown in README.md and docs/*.md runs, every
relative link and file path it names exists, and the claims that were once false stay true.

Which commands run, by the Markdown alone:

- every command in a fenced block marked ```sh, ```bash or ```shell (one per line; a line ending
  in `\\` goes on; `#` lines are comments), every `$ ` line of a ```console block, and every line
  starting with `promptd ` in an unmarked fence;
- not a block whose preceding line is an HTML comment starting `<!-- no-run` (say why in it:
  `<!-- no-run: builds the whole repository -->`), nor ```text blocks (synopses, transcripts);
- each must exit 0, unless its trailing comment says otherwise: `promptd lint bad.jinja  # exit 1`.

They run with the installed `promptd` first on PATH (the one next to this interpreter), one fresh
folder per block holding the fixtures below (commands of one block share it, in order), HOME and
XDG_STATE_HOME inside it, stdin empty, and no PROMPTD_* variable from the caller's environment.
A new example that needs a file gets it here, in FIXTURES.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import PROMPTD, ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_LANGS = {"sh", "bash", "shell"}
NO_RUN = "<!-- no-run"
EXPECTED_EXIT = re.compile(r"\bexits?\s+(\d+)\b")

GOOD_TEMPLATE = """You are ${{ system_prompt_label }}, the release assistant for this repository.
${%- if tools.by_kind.execute %}
Run the release checks with `${{ tools.by_kind.execute }}` before you tag anything.
${%- endif %}
"""
UNGUARDED_TEMPLATE = "Track your work with `${{ tools.by_kind.plan }}`.\n"

# Files the documented commands name, as a user following the docs would have them.
FIXTURES: dict[str, str] = {
    "ctx.yaml": "working_directory: /home/dev/project\nos_name: linux\nshell_path: /bin/bash\ncurrent_date: '2026-11-01'\n",
    "ctx.json": '{"working_directory": "/home/dev/project", "os_name": "linux"}\n',
    "body.md": "Answer in English.\n",
    "tools.json": '{"read": "read_file", "execute": "run_command", "plan": "todo_write"}\n',
    "my_template.jinja": GOOD_TEMPLATE,
    "t.jinja": GOOD_TEMPLATE,
    "other.jinja": "Plan with care.\n${%- if tools.by_kind.plan %} Track it with `${{ tools.by_kind.plan }}`.${%- endif %}\n",
    "drafts/unguarded.jinja": UNGUARDED_TEMPLATE,  # in a folder of its own: `lint *.jinja` is clean
    "my_apply_patch.jinja": "Apply changes as patches.\n${%- if tools.by_kind.patch %} Use `${{ tools.by_kind.patch }}`.${%- endif %}\n",
    "params.json": '{"key": "session.cwd", "body": "/tmp"}\n',
    "team_primary.jinja": GOOD_TEMPLATE,
    "my.jinja": GOOD_TEMPLATE,
    "headless.yaml": "is_non_interactive: true\nworking_directory: /home/dev/project\n",
    "interactive.yaml": "is_non_interactive: false\nworking_directory: /home/dev/project\n",
}


@dataclass(frozen=True)
class Example:
    path: Path
    line: int
    block: int  # the line of the block's opening fence: commands of one block share a folder
    command: str
    expected: int

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _comment(command: str) -> str:
    """The trailing `# ...` comment of a shell line (a `#` outside quotes, after a blank)."""
    quote = ""
    for index, char in enumerate(command):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or command[index - 1] in " \t"):
            return command[index:]
    return ""


def _expected(command: str) -> int:
    found = EXPECTED_EXIT.search(_comment(command))
    return int(found.group(1)) if found else 0


def extract(path: Path) -> list[Example]:
    lines = path.read_text(encoding="utf-8").splitlines()
    examples: list[Example] = []
    index = 0
    while index < len(lines):
        fence = re.match(r"^```\s*(\w*)\s*$", lines[index])
        if not fence:
            index += 1
            continue
        lang = fence.group(1).lower()
        start = index
        before = next((lines[i].strip() for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        skip = before.startswith(NO_RUN)
        index += 1
        body: list[tuple[int, str]] = []
        while index < len(lines) and not lines[index].startswith("```"):
            body.append((index + 1, lines[index]))
            index += 1
        index += 1  # the closing fence
        if skip:
            continue
        pending: tuple[int, str] | None = None
        for number, text in body:
            if lang == "console":
                if pending is None and not text.startswith("$ "):
                    continue
                text = text[2:] if pending is None else text
            elif lang in SHELL_LANGS:
                if pending is None and (not text.strip() or text.lstrip().startswith("#")):
                    continue
            elif lang == "":
                if pending is None and not text.startswith("promptd "):
                    continue
            else:
                continue
            first, so_far = pending if pending else (number, "")
            if text.rstrip().endswith("\\"):
                pending = (first, so_far + text.rstrip()[:-1] + " ")
                continue
            pending = None
            command = (so_far + text).strip()
            examples.append(Example(path, first, start + 1, command, _expected(command)))
    return examples


EXAMPLES = [example for path in DOCS for example in extract(path)]


def _bin_dir() -> Path:
    """The folder of the installed `promptd`: the one beside the interpreter running the tests."""
    folder = Path(sys.executable).parent
    if not (folder / "promptd").exists():
        pytest.skip(f"no installed promptd next to {sys.executable}")
    return folder


def _environment(home: Path, state: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("PROMPTD_")}
    env.update(PATH=f"{_bin_dir()}{os.pathsep}{env.get('PATH', '')}", HOME=str(home), XDG_STATE_HOME=str(state), LC_ALL="C.UTF-8")
    return env


@pytest.fixture(scope="module")
def sealed_fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """`k` (a vault key) and `my.sealed` (t.jinja sealed with it), made once by promptd itself."""
    folder = tmp_path_factory.mktemp("sealed")
    (folder / "t.jinja").write_text(FIXTURES["t.jinja"], encoding="utf-8")
    env = _environment(folder, folder / "state")
    for command in ("promptd vault keygen k", "promptd vault seal t.jinja -o my.sealed --key-file k"):
        subprocess.run(["bash", "-c", command], cwd=folder, env=env, check=True, capture_output=True, timeout=120)
    return {name: (folder / name).read_bytes() for name in ("k", "my.sealed")}


def _workspace(tmp_path: Path, sealed: dict[str, bytes]) -> tuple[Path, dict[str, str]]:
    for name, text in FIXTURES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    for name, data in sealed.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "k").chmod(0o600)
    # Paths the docs give relative to a checkout (src/promptd/prompt/templates/...).
    (tmp_path / "src").symlink_to(ROOT / "src", target_is_directory=True)
    # An empty home: `promptd vault keygen ~/.config/promptd/vault.key`, as documented, must
    # create the missing folders itself.
    home = tmp_path / "home"
    home.mkdir()
    return tmp_path, _environment(home, tmp_path / "state")


BLOCKS = sorted({(e.path, e.block) for e in EXAMPLES}, key=lambda b: (str(b[0]), b[1]))


def test_the_docs_show_commands_to_run():
    # The extractor finds what it should: a rewrite of the Markdown must not silently hide them.
    where = {e.path.name for e in EXAMPLES}
    assert {"README.md", "cli.md", "agent.md", "templates.md"} <= where, where
    assert any(e.expected == 1 for e in EXAMPLES), "no documented command expects findings (exit 1)"


# What only a shell reads outside quotes: pipes, redirections, variables, globs, `~`, a leading
# assignment. A command without any of them means to the shell exactly its shlex words.
_QUOTED = re.compile(r"'[^']*'|\"[^\"\\$`]*\"")
_SHELL_ONLY = re.compile(r"[|&;<>()$`*?~\[\]{}\\]|^\w+=")


def promptd_argv(command: str) -> list[str] | None:
    """The arguments of a documented `promptd ...` line that needs no shell (not `serve`, which
    owns its process's descriptors), or None: that line runs in bash."""
    line = command[: len(command) - len(_comment(command))].strip()
    if _SHELL_ONLY.search(_QUOTED.sub("", line)):
        return None
    words = shlex.split(line)
    if words[:1] != ["promptd"] or "serve" in words:
        return None
    return words[1:]


def _run_in_process(argv: list[str], folder: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]) -> tuple[int, str]:
    """promptd.cli.main(argv) as the shell would run it: the same folder, environment and empty
    stdin; (exit status, stderr), with an escaping exception's traceback as stderr's end."""
    from promptd.cli.main import main

    with monkeypatch.context() as patch:
        for name in set(os.environ) - set(env):
            patch.delenv(name)
        for name, value in env.items():
            patch.setenv(name, value)
        patch.chdir(folder)
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
        capsysbinary.readouterr()
        try:
            status = main(argv)
            tail = ""
        except SystemExit as exit:
            status, tail = (exit.code if isinstance(exit.code, int) else 1), ""
        except Exception:
            status, tail = 1, traceback.format_exc()
        err = capsysbinary.readouterr().err.decode("utf-8", "replace")
    return status, err + tail


def test_the_commands_a_shell_would_read_differently_run_in_bash():
    assert promptd_argv("promptd lint --strict my_template.jinja   # exits 1") == ["lint", "--strict", "my_template.jinja"]
    assert promptd_argv('promptd call reminder/wrap \'{"key": "k", "body": "x"}\'') == ["call", "reminder/wrap", '{"key": "k", "body": "x"}']
    for command in (
        "promptd lint *.jinja",
        "promptd keygen ~/k",
        "promptd call rpc.discover > o.json",
        "echo x | promptd lint -",
        "PROMPTD_X=1 promptd keys",
        "promptd serve",
        'promptd call x "$HOME"',
    ):
        assert promptd_argv(command) is None, command


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{p.relative_to(ROOT)}:{line}" for p, line in BLOCKS])
def test_every_documented_command_runs_with_its_documented_exit_status(block, tmp_path, sealed_fixtures, monkeypatch, capsysbinary):
    # A plain `promptd ...` line runs as promptd.cli.main(argv) in this process, with what the
    # shell would give it; a line that needs the shell runs in bash.
    folder, env = _workspace(tmp_path, sealed_fixtures)
    for example in [e for e in EXAMPLES if (e.path, e.block) == block]:
        argv = promptd_argv(example.command)
        if argv is None:
            result = subprocess.run(["bash", "-c", example.command], cwd=folder, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
            status, stderr = result.returncode, result.stderr.decode("utf-8", "replace")
        else:
            status, stderr = _run_in_process(argv, folder, env, monkeypatch, capsysbinary)
        assert status == example.expected, (
            f"{example.where}: `{example.command}` exited {status}, the docs say {example.expected} "
            f"(mark the block <!-- no-run: why -->, or add a fixture in tests/test_doc_examples.py)\n{stderr[-2000:]}"
        )
        assert "Traceback (most recent call last)" not in stderr, f"{example.where}: a traceback\n{stderr[-2000:]}"


def test_the_extractor_reads_continuations_console_prompts_exit_comments_and_no_run(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        '```sh\n# a comment\npromptd call reminder/wrap \\\n  \'{"key": "k", "body": "# not a comment"}\'\n'
        "promptd lint other.jinja   # exits 1: one finding\n```\n\n"
        "```console\n$ promptd --version\npromptd 0.1.0\n```\n\n"
        "<!-- no-run: needs the network -->\n```sh\nnpm install\n```\n\n"
        "```\npromptd keys\nnot a command\n```\n\n```text\npromptd render [--json]\n```\n",
        encoding="utf-8",
    )
    found = [(e.command, e.expected) for e in extract(page)]
    assert found == [
        ('promptd call reminder/wrap    \'{"key": "k", "body": "# not a comment"}\'', 0),
        ("promptd lint other.jinja   # exits 1: one finding", 1),
        ("promptd --version", 0),
        ("promptd keys", 0),
    ]


# -- links and paths ---------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, re.M)}


LINK = re.compile(r"\]\(([^)\s]+)\)")


LINKED = [*DOCS, ROOT / "clients" / "node" / "README.md", ROOT / "clients" / "go" / "README.md"]


@pytest.mark.parametrize("page", LINKED, ids=[str(p.relative_to(ROOT)) for p in LINKED])
def test_every_relative_link_and_anchor_resolves(page):
    broken = []
    for match in LINK.finditer(page.read_text(encoding="utf-8")):
        target = match.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve() if file_part else page
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(target)
    assert broken == [], f"{page.relative_to(ROOT)}: broken links {broken}"


REPO_PATH = re.compile(r"`((?:src|tests|protocol|clients|docs|examples|bench|scripts)/[^`\s]*)`")


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_every_repository_path_the_docs_name_exists(page):
    missing = []
    for match in REPO_PATH.finditer(page.read_text(encoding="utf-8")):
        name = match.group(1)
        if "<" in name:
            continue  # a pattern such as protocol/vectors/<method>/
        if not list(ROOT.glob(name)) and not (ROOT / name).exists():
            missing.append(name)
    assert missing == [], f"{page.relative_to(ROOT)}: no such paths {missing}"


# -- claims that were once false ---------------------------------------------------------------


def test_the_readme_lints_the_real_template_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "templates/*.md" not in readme
    lint = [e for e in EXAMPLES if e.path.name == "README.md" and e.command.startswith("promptd lint")]
    assert lint and all(list(ROOT.glob(arg)) for e in lint for arg in shlex.split(e.command, comments=True)[2:])


def test_the_shipped_template_paths_in_templates_md_exist():
    text = (ROOT / "docs" / "templates.md").read_text(encoding="utf-8")
    named = re.findall(r"`([\w/]*templates/[\w/.]+\.(?:jinja|sealed))`", text)
    assert len(named) >= 4 and all((ROOT / name).is_file() for name in named), named


def _render_error(template: str) -> dict:
    from promptd import Local, LocalError

    door = Local({"log_level": "error"})
    with pytest.raises(LocalError) as failure:
        door.call("prompt/render", {"context": {"system_prompt": {"custom": template}}})
    return failure.value.data


def test_sandbox_refusals_carry_the_error_names_templates_md_documents():
    # Every size bound says "security", range() past 100,000 items included (docs/templates.md,
    # "What the sandbox bounds"); Jinja2's own check there used to say "OverflowError".
    too_big = _render_error('${{ "x" * 5000000 }}')
    assert too_big["kind"] == "template_render" and too_big["error"] == "security"
    too_long = _render_error("${% for i in range(200000) %}${% endfor %}x")
    assert too_long["kind"] == "template_render" and too_long["error"] == "security"
    text = (ROOT / "docs" / "templates.md").read_text(encoding="utf-8")
    assert "OverflowError" not in text and "`range()` over 100,000" in text


def test_the_node_readme_names_the_python_its_test_server_needs():
    readme = (ROOT / "clients" / "node" / "README.md").read_text(encoding="utf-8")
    assert "PROMPTD_PYTHON" in readme and "promptd is installed" in readme
    # What it says works: the venv's Python runs the test server, which answers.
    script = ROOT / "tests" / "support" / "serve_with_test_methods.py"
    result = subprocess.run(
        [sys.executable, str(script)],
        input=b'{"jsonrpc":"2.0","id":1,"method":"reminder/keys"}\n',
        capture_output=True,
        timeout=60,
        env={**os.environ, "PROMPTD_PYTHON": sys.executable, "PROMPTD_LOG_LEVEL": "warning"},
    )
    assert result.returncode == 0 and b'"id":1' in result.stdout
    # The variable reaches the sidecar (the client passes its environment on), which only warns.
    served = subprocess.run(
        [*PROMPTD, "serve"],
        input=b'{"jsonrpc":"2.0","id":1,"method":"reminder/keys"}\n',
        capture_output=True,
        timeout=60,
        env={**os.environ, "PROMPTD_PYTHON": "/usr/bin/python3", "PROMPTD_LOG_LEVEL": "warning"},
    )
    assert served.returncode == 0 and b'"id":1' in served.stdout
    assert b'"env_ignored"' in served.stderr and b"PROMPTD_PYTHON" in served.stderr


def _logged_events() -> set[str]:
    # A call with the event's name, or a module's named event (rpc/faults.py's LOG_EVENT).
    pattern = re.compile(r"\.(?:debug|info|warning|error)\(\s*\"([a-z_]+)\"|^LOG_EVENT = \"([a-z_]+)\"", re.MULTILINE)
    return {m.group(1) or m.group(2) for path in (ROOT / "src" / "promptd").rglob("*.py") for m in pattern.finditer(path.read_text(encoding="utf-8"))}


def test_every_log_event_is_listed_in_operations_md():
    events = _logged_events()
    assert {"started", "request", "internal_error", "env_ignored"} <= events
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = text[text.index("## Logs") :]
    listed = set(re.findall(r"`([a-z_]+)`", section))
    assert sorted(events - listed) == []


def _names_setting(row: str, prefix: str, name: str) -> bool:
    """A settings row names `prefix + name` in full, or as a `/`-separated sibling of a full name
    in the same section (`reminders.spill_max_file_bytes` / `_session_bytes`)."""
    cell = row.split("|")[1]
    names = re.findall(r"`([^`]+)`", cell)
    if f"{prefix}{name}" in names:
        return True
    return bool(names) and names[0].startswith(prefix) and any(n == name or (n.startswith("_") and name.endswith(n)) for n in names[1:])


def test_every_setting_minimum_is_in_operations_md():
    from annotated_types import Ge, Gt, Le
    from pydantic import BaseModel

    from promptd.config import Config

    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    missing = []

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            annotation = field.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                walk(annotation, f"{prefix}{name}.")
                continue
            bounds = {type(m): m for m in field.metadata if isinstance(m, (Ge, Gt, Le))}
            if not bounds:
                continue
            wanted = []
            if Ge in bounds:
                wanted.append(f"≥ {bounds[Ge].ge:g}" if Le not in bounds else f"{bounds[Ge].ge:g} to {bounds[Le].le:g}")
            if Gt in bounds:
                wanted.append(f"> {bounds[Gt].gt:g}")
            row = next((r for r in rows if _names_setting(r, prefix, name)), None)
            if row is None or not all(w in row for w in wanted):
                missing.append(f"{prefix}{name} {wanted}")

    walk(Config, "")
    assert missing == []


def test_nudge_fired_turns_are_one_more_than_the_worked_table_says():
    from promptd import Local

    events: list[dict] = []
    door = Local(
        {"log_level": "error", "reminders": {"session_metadata": False, "project_memory": False, "file_modified": False}},
        on_event=lambda method, params: events.append(params) if method == "event/nudge_fired" else None,
    )
    door.call("initialize", {"capabilities": {"events": True}, "tools": {"by_kind": {"plan": "todo_write"}}})
    nudged = []
    for turn in range(16):
        composed = door.call("turn/compose", {"session": "s", "user_message": "go"})
        if any(f["key"] == "todo.nudge" and f["status"] == "delivered" for f in composed["reminder"]["fragments"]):
            nudged.append(turn)
        door.call("turn/complete", {"session": "s", "tools_called": ["todo_write"] if turn == 10 else []})
    assert nudged == [3, 9, 15]  # the worked table in docs/todos.md
    assert [e["turn"] for e in events] == [4, 10, 16]  # what docs/todos.md says the event carries
    assert "`turn: 4`, `10` and `16`" in (ROOT / "docs" / "todos.md").read_text(encoding="utf-8")


# -- Python blocks -----------------------------------------------------------------------------
#
# Every ```python block of README.md and docs/*.md runs: a page's blocks in order, as one script
# (a page builds its loop up step by step), in a fresh folder, with the interpreter running the
# tests. Sockets other than AF_UNIX refuse to connect, so a snippet that would call a model's API
# fails here instead of reaching the network: the SDK pages build the SDKs' typed objects locally.

NO_NETWORK = """
import socket as _socket
_connect = _socket.socket.connect
def _refuse(self, address, *args):
    if self.family != getattr(_socket, "AF_UNIX", None):
        raise OSError("the documentation's examples run offline")
    return _connect(self, address, *args)
_socket.socket.connect = _refuse
_socket.create_connection = lambda *a, **k: (_ for _ in ()).throw(OSError("offline"))
"""


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """The page's runnable ```python blocks: (line of the opening fence, code)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        if not re.match(r"^```python\s*$", lines[index]):
            index += 1
            continue
        start = index
        before = next((lines[i].strip() for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        index += 1
        body: list[str] = []
        while index < len(lines) and not lines[index].startswith("```"):
            body.append(lines[index])
            index += 1
        index += 1
        if not before.startswith(NO_RUN):
            blocks.append((start + 1, "\n".join(body) + "\n"))
    return blocks


PYTHON_PAGES = [path for path in DOCS if python_blocks(path)]


def test_the_sdk_pages_have_python_to_run():
    names = {path.name for path in PYTHON_PAGES}
    assert {"sdk-anthropic.md", "sdk-openai-chat.md", "sdk-openai-responses.md", "sdk-mcp.md", "sdk-gemini.md", "README.md"} <= names, names


def _run_python(page: Path, folder: Path) -> subprocess.CompletedProcess[bytes]:
    # One script, each block marked with its line so that a traceback names the page's line.
    script = NO_NETWORK + "".join(f"\n# {page.name}:{line}\n{code}" for line, code in python_blocks(page))
    (folder / "example.py").write_text(script, encoding="utf-8")
    env = _environment(folder / "home", folder / "state")
    env = {name: value for name, value in env.items() if not name.endswith("_API_KEY")}
    return subprocess.run([sys.executable, "example.py"], cwd=folder, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=[str(p.relative_to(ROOT)) for p in PYTHON_PAGES])
def test_every_python_block_of_a_page_runs_offline(page, tmp_path):
    result = _run_python(page, tmp_path)
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 0, f"{page.relative_to(ROOT)}: the Python blocks failed\n{stderr[-3000:]}"


def test_a_failing_python_block_or_a_network_call_fails_the_page(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 1\n```\n\n<!-- no-run: a sketch -->\n```python\nraise SystemExit(3)\n```\n\n```python\nassert x == 2\n```\n", encoding="utf-8")
    assert [line for line, _ in python_blocks(page)] == [1, 10]
    assert _run_python(page, tmp_path).returncode == 1
    page.write_text("```python\nimport urllib.request\nurllib.request.urlopen('http://127.0.0.1:9/')\n```\n", encoding="utf-8")
    result = _run_python(page, tmp_path)
    assert result.returncode == 1 and b"offline" in result.stderr
