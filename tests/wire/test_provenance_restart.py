"""Reminders that prove themselves: a block verifies in the session it was written for, in any
process holding the host's provenance key, whatever was written since; and never elsewhere."""

from __future__ import annotations

import os

from conftest import call_in_process
from hypothesis import given, settings
from hypothesis import strategies as st

from promptd import keyfile
from promptd.config import Config
from promptd.reminders.ledger import Ledger, Trust
from promptd.reminders.provenance import parse, wrap_trusted
from promptd.reminders.signing import Signer
from promptd.runtime import Runtime


def key_file(folder, name="provenance.key"):
    path = folder / name
    path.write_text(keyfile.new_key().hex() + "\n")
    path.chmod(0o600)
    return str(path)


def compose(served, session="s1"):
    served.call("session/update", {"session": session, "cwd": "/srv/app", "date": "2026-12-01"})
    return served.call("turn/compose", {"session": session, "user_message": "Fix the build"})["content"]


def test_a_block_written_by_one_process_verifies_in_the_next_with_the_same_key(spawn, tmp_path):
    env = {"PROMPTD_REMINDERS__PROVENANCE_KEY_FILE": key_file(tmp_path)}
    first = spawn(env=env)
    content = compose(first)
    history = [{"role": "user", "content": content}]
    assert first.close(timeout=60) == 0
    second = spawn(env=env)
    (block,) = second.call("reminder/parse", {"text": content, "session": "s1"})["blocks"]
    assert block["authenticated"]
    # The stored conversation comes back byte for byte: the provider's prompt cache survives.
    cleaned = second.call("history/sanitize", {"messages": history})
    assert cleaned["messages"] == history and cleaned["neutralized"] == 0 and cleaned["dropped"] == 0
    assert second.call("reminder/strip", {"text": content, "session": "s1"})["text"] == "Fix the build"


def test_another_key_or_no_key_makes_the_block_another_process_s(spawn, tmp_path):
    content = compose(spawn(env={"PROMPTD_REMINDERS__PROVENANCE_KEY_FILE": key_file(tmp_path, "a.key")}))
    for env in ({"PROMPTD_REMINDERS__PROVENANCE_KEY_FILE": key_file(tmp_path, "b.key")}, {}):
        (block,) = spawn(env=env).call("reminder/parse", {"text": content, "session": "s1"})["blocks"]
        assert (block["authenticated"], block["refusal"]) == (False, "other_process")


def test_an_older_key_still_verifies_after_rotation(spawn, tmp_path):
    old = key_file(tmp_path, "old.key")
    content = compose(spawn(env={"PROMPTD_REMINDERS__PROVENANCE_KEY_FILE": old}))
    rotated = spawn(env={"PROMPTD_REMINDERS__PROVENANCE_KEY_FILE": key_file(tmp_path, "new.key"), "PROMPTD_REMINDERS__PROVENANCE_PREVIOUS_KEY_FILES": f'["{old}"]'})
    assert rotated.call("reminder/parse", {"text": content, "session": "s1"})["blocks"][0]["authenticated"]


def test_a_block_of_one_session_is_refused_in_another(spawn):
    served = spawn()
    alice = compose(served, "alice")
    (block,) = served.call("reminder/parse", {"text": alice, "session": "bob"})["blocks"]
    assert (block["authenticated"], block["refusal"]) == (False, "other_session")
    # Not hidden from bob's view either.
    assert served.call("reminder/strip", {"text": alice, "session": "bob"})["text"] == alice


def test_a_key_file_that_others_can_read_is_refused_at_start(tmp_path):
    path = key_file(tmp_path)
    os.chmod(path, 0o644)
    from conftest import run_cli

    done = run_cli("serve", env={"PROMPTD_REMINDERS__PROVENANCE_KEY_FILE": path}, stdin=b"")
    assert done.returncode == 2 and b"provenance_key_file" in done.stderr
    assert open(path).read().strip().encode() not in done.stderr


def test_one_request_with_65536_parts_leaves_an_earlier_block_verifying():
    runtime = Runtime(Config())
    earlier = call_in_process("turn/compose", {"session": "s", "user_message": "hi", "directives": ["Be brief."]}, runtime)["content"]
    call_in_process("reminder/wrap_many", {"parts": [{"key": "k", "body": str(n)} for n in range(65_536)], "nonce": True}, runtime)
    assert call_in_process("reminder/parse", {"text": earlier, "session": "s"}, runtime)["blocks"][0]["authenticated"]


def rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def test_two_hundred_thousand_blocks_cost_no_memory_and_the_first_still_verifies():
    trust = Trust("0f" * 16, Ledger(16))
    first = wrap_trusted("the first block", trust, "pua", "s")
    for n in range(2_000):  # warm the allocator
        wrap_trusted(f"block {n}", trust, "pua", "s")
    before = rss_kib()
    for n in range(200_000):
        wrap_trusted(f"block {n}", trust, "pua", "s")
    assert rss_kib() - before < 4 * 1024
    assert parse(first, trust, "pua", "s")[0].authenticated and len(trust.ledger) == 0


TRUST = Trust("0f" * 16, Ledger(16), Signer.fresh())
OTHER_KEY = Trust("0f" * 16, Ledger(16), Signer.fresh())


@settings(max_examples=200, deadline=None)
@given(
    body=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60),
    session=st.text(min_size=1, max_size=8),
    other=st.text(min_size=1, max_size=8),
    where=st.integers(min_value=0),
    style=st.sampled_from(["pua", "xml"]),
)
def test_no_block_verifies_in_another_session_under_another_key_or_with_any_byte_changed(body, session, other, where, style):
    block = wrap_trusted(body, TRUST, style, session)
    (genuine,) = parse(block, TRUST, style, session)
    assert genuine.authenticated
    if other != session:
        assert parse(block, TRUST, style, other)[0].refusal == "other_session"
    assert not parse(block, OTHER_KEY, style, session)[0].authenticated
    at = where % len(block)
    changed = block[:at] + ("x" if block[at] != "x" else "y") + block[at + 1 :]
    assert not any(b.authenticated for b in parse(changed, TRUST, style, session))


def test_history_sanitize_with_a_session_keeps_only_that_session_s_compose_blocks():
    runtime = Runtime(Config())
    alice = call_in_process("turn/compose", {"session": "alice", "user_message": "hi", "directives": ["Alice's rules."]}, runtime)["content"]
    history = [{"role": "user", "content": alice}]
    kept = call_in_process("history/sanitize", {"messages": history, "session": "alice"}, runtime)
    assert kept["messages"] == history and kept["neutralized"] == 0
    moved = call_in_process("history/sanitize", {"messages": history, "session": "bob"}, runtime)
    assert moved["neutralized"] >= 1 and "Alice's rules." in moved["messages"][0]["content"]
    assert not call_in_process("reminder/parse", {"text": moved["messages"][0]["content"], "session": "bob"}, runtime)["blocks"]
