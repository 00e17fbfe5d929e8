"""The budget, deduplication and truncation rules, as pure functions."""

from __future__ import annotations

from pathlib import Path

from promptd.assembly.budget import SEPARATOR, join_body, plan, truncate
from promptd.assembly.model import Fragment


def frags(*texts: str) -> list[Fragment]:
    return [Fragment(f"p{i}", "k", t) for i, t in enumerate(texts)]


def statuses(result) -> list[str]:
    return [p.status.value for p in result.placed]


def test_fragments_exactly_filling_the_budget_with_separators_are_all_delivered():
    result = plan(frags("a" * 10, "b" * 10), None, 10 + len(SEPARATOR) + 10)
    assert statuses(result) == ["delivered", "delivered"]


def test_one_character_over_drops_the_trailing_fragment():
    result = plan(frags("a" * 10, "b" * 10), None, 10 + len(SEPARATOR) + 9)
    assert statuses(result) == ["delivered", "dropped"]


def test_a_later_fragment_that_still_fits_is_kept_after_one_is_dropped():
    result = plan(frags("a" * 10, "b" * 50, "c" * 5), None, 20)
    assert statuses(result) == ["delivered", "dropped", "delivered"]


def test_exact_duplicates_are_reported_and_cost_nothing():
    result = plan(frags("same", "same", "other"), None, 4 + len(SEPARATOR) + 5)
    assert statuses(result) == ["delivered", "duplicate", "delivered"]


def test_trigger_markup_is_charged_first_and_counts_a_separator():
    markup = "<display-trigger>x</display-trigger>"
    fits = plan(frags("a" * 10), markup, len(markup) + len(SEPARATOR) + 10)
    assert statuses(fits) == ["delivered"] and fits.trigger == markup
    over = plan(frags("a" * 10), markup, len(markup) + len(SEPARATOR) + 9)
    assert statuses(over) == ["truncated"]


def test_no_fragment_means_no_trigger_either():
    assert plan([], "<display-trigger>x</display-trigger>", 100).trigger is None


def test_only_the_first_fragment_is_truncated_when_nothing_was_delivered_yet():
    result = plan(frags("a" * 100, "b" * 100), None, 50)
    assert statuses(result) == ["truncated", "dropped"]
    assert result.truncate_room == 50
    small = plan(frags("a" * 10, "b" * 100), None, 50)
    assert statuses(small) == ["delivered", "dropped"]


def test_a_truncated_fragment_fills_its_room_exactly_with_its_marker():
    def marker(shown: int, total: int) -> str:
        return f"\n[{shown}/{total}]"

    text = truncate("x" * 1000, 100, marker)
    assert text is not None and len(text) <= 100 and text.endswith("/1000]")
    assert truncate("x" * 1000, 5, marker) is None


def test_the_body_joins_trigger_and_fragments_with_one_blank_line():
    assert join_body("T", ["a", "b"]) == "T\n\na\n\nb"
    assert join_body(None, ["a"]) == "a"


def test_a_cut_that_would_form_a_new_escape_is_cleaned_and_still_fits():
    from promptd.reminders.sanitize import sanitize

    def marker(shown: int, total: int) -> str:
        return f"\n[{shown}/{total}]"

    text = "a" * 40 + "&#xE2030;" + "b" * 100
    for room in range(20, 80):
        cut = truncate(text, room, marker, lambda t: sanitize(t, "0" * 32).text)
        if cut is not None:
            assert len(cut) <= room
            assert sanitize(cut, "0" * 32).text == cut


def test_the_registry_and_the_file_notices_are_bounded():
    import pytest
    from conftest import call_in_process

    from promptd.assembly.registry import MAX_PROVIDERS
    from promptd.config import Config
    from promptd.methods.boundary import RpcFailure
    from promptd.runtime import Runtime
    from promptd.sessions.store import MAX_MODIFIED_FILES

    runtime = Runtime(Config())
    room = MAX_PROVIDERS - len(runtime.providers.entries())
    for n in range(room):
        call_in_process("providers/register", {"name": f"p{n}", "kind": "static", "key": "k", "text": "x"}, runtime)
    with pytest.raises(RpcFailure) as refused:
        call_in_process("providers/register", {"name": "one-more", "kind": "static", "key": "k", "text": "x"}, runtime)
    assert refused.value.data["kind"] == "invalid_provider"
    call_in_process("session/update", {"session": "s", "modified_files": [f"f{n}" for n in range(MAX_MODIFIED_FILES + 50)]}, runtime)
    files = runtime.sessions.get("s").modified_files
    assert len(files) == MAX_MODIFIED_FILES and files[-1] == f"f{MAX_MODIFIED_FILES + 49}"


# -- a fragment that cannot be truncated frees its room ----------------------------------------


def test_a_fragment_that_could_not_be_truncated_is_dropped_and_costs_nothing():
    markup = "<display-trigger>x</display-trigger>"
    first = plan(frags("d" * 3000, "p" * 9), markup, 200)
    assert statuses(first) == ["truncated", "dropped"]
    again = plan(frags("d" * 3000, "p" * 9), markup, 200, frozenset({0}))
    assert statuses(again) == ["dropped", "delivered"] and again.trigger == markup
    assert again.truncate_room is None


def _quiet_door(spill_dir):
    from promptd import Local

    return Local(
        {
            "log_level": "error",
            "reminders": {"session_metadata": False, "project_memory": False, "file_modified": False, "spill_dir": str(spill_dir)},
            "todo_nudge": {"enabled": False},
        }
    )


def test_later_fragments_that_still_fit_are_kept_when_the_first_cannot_carry_its_marker(tmp_path):
    # The documented rule, with a display trigger, a 3,000-character first directive and a
    # 9-character provider at budget 200: the spill path (a long folder here) cannot fit beside the
    # trigger, so the directive is dropped, and the provider still fits and is delivered.
    spill_dir = tmp_path / ("deep" * 30) / "spill"
    door = _quiet_door(spill_dir)
    door.call("providers/register", {"name": "tiny", "kind": "static", "scope": "global", "key": "directive", "text": "9 chars.."})
    result = door.call(
        "reminder/assemble",
        {"session": "s", "user_message": "hi", "directives": ["d" * 3000], "display_trigger": ["Read the notes"], "budget": 200},
    )
    assert [(f["provider"], f["status"]) for f in result["fragments"]] == [("directive", "dropped"), ("tiny", "delivered")]
    assert result["body"].endswith("9 chars..") and len(result["body"]) <= 200
    assert result["display_trigger"] == "Read the notes" and result["spill"] is None
    # Nothing is left behind: no file and no empty session folder.
    assert not spill_dir.exists() or list(spill_dir.iterdir()) == []


def test_a_truncated_first_fragment_still_fills_the_budget_and_spills(tmp_path):
    door = _quiet_door(tmp_path / "spill")
    door.call("providers/register", {"name": "tiny", "kind": "static", "scope": "global", "key": "directive", "text": "9 chars.."})
    result = door.call("reminder/assemble", {"session": "s", "user_message": "hi", "directives": ["d" * 3000], "budget": 400})
    assert [f["status"] for f in result["fragments"]] == ["truncated", "dropped"]
    assert result["spill"]["path"] in result["body"] and len(result["body"]) <= 400


def test_a_marker_that_cannot_fit_writes_no_spill_folder_at_all(tmp_path):
    spill_dir = tmp_path / "spill"
    door = _quiet_door(spill_dir)
    result = door.call("reminder/assemble", {"session": "s", "user_message": "hi", "directives": ["d" * 3000], "budget": 30})
    assert [f["status"] for f in result["fragments"]] == ["dropped"] and result["text"] == ""
    assert not spill_dir.exists() or list(spill_dir.iterdir()) == []


def test_a_failed_or_discarded_spill_leaves_no_empty_session_folder(tmp_path):
    from promptd.assembly.spill import SpillFailed, SpillStore
    from promptd.config import RemindersConfig

    store = SpillStore(RemindersConfig(spill_dir=str(tmp_path), spill_max_total_bytes=100))
    kept = store.save("a", "x" * 60)
    try:
        store.save("b", "x" * 60)
    except SpillFailed as exc:
        assert exc.reason == "total_cap"
    else:
        raise AssertionError("the total cap was not applied")
    assert [p.name for p in tmp_path.iterdir()] == [Path(kept.path).parent.name]
    store.discard(kept)
    assert list(tmp_path.iterdir()) == []
