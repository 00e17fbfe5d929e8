"""The template author's rules: cache_volatile and no_printed_form findings, unknown filters and
tests refused by a render whatever branch they are in, and empty tool names refused."""

from __future__ import annotations

import pytest
from conftest import call_in_process

from promptd.cli.main import main as cli_main
from promptd.errors import EmptyToolName, TemplateSyntax
from promptd.local import LocalError
from promptd.prompt.engine import engine
from promptd.prompt.lint import lint
from promptd.prompt.pipeline import shipped_source

VOLATILE = ("current_date", "working_directory")


def found(source, kind, **options):
    return [(v.line, v.column, v.severity) for v in lint(source, volatile=VOLATILE, **options) if v.kind == kind]


# -- cache_volatile ---------------------------------------------------------------------------------


def test_a_volatile_read_is_a_warning_at_its_name_with_the_share_of_text_at_risk():
    source = "You are a careful agent.\nToday is ${{ current_date }}.\nRules follow.\n"
    [finding] = [v for v in lint(source, volatile=VOLATILE) if v.kind == "cache_volatile"]
    assert (finding.line, finding.column, finding.severity) == (2, 14, "warning")
    at_risk = len("Today is ${{ current_date }}.\nRules follow.\n")
    assert f"({at_risk} characters)" in finding.message
    assert f"{round(100 * at_risk / len(source))}%" in finding.message
    assert "session.date" in finding.message and "docs/reminder-keys.md" in finding.message


def test_every_volatile_read_is_reported_tests_and_filters_included():
    source = "${% if working_directory %}in ${{ working_directory | upper }}${% endif %}\n${{ current_date[:4] }}"
    assert found(source, "cache_volatile") == [(1, 8, "warning"), (1, 35, "warning"), (2, 5, "warning")]


def test_only_the_configured_volatile_variables_count_and_a_name_the_template_sets_is_its_own():
    assert found("${{ os_name }}", "cache_volatile") == []
    assert [v.kind for v in lint("${{ os_name }}", volatile=["os_name"])] == ["cache_volatile"]
    assert found("${% set current_date = 'x' %}${{ current_date }}", "cache_volatile") == []


def test_the_shipped_templates_read_no_volatile_variable():
    for name in ("primary", "subagent"):
        assert found(shipped_source(name), "cache_volatile") == []


def test_prompt_lint_takes_the_configured_volatile_variables_unless_the_request_names_its_own():
    source = "${{ current_date }} on ${{ os_name }}"
    kinds = lambda params: [(v["column"], v["kind"]) for v in call_in_process("prompt/lint", {"template": source, **params})["violations"]]  # noqa: E731
    assert kinds({}) == [(5, "cache_volatile")]
    assert kinds({"volatile_variables": ["os_name"]}) == [(28, "cache_volatile")]
    assert kinds({"volatile_variables": []}) == []


def test_cache_volatile_warnings_alone_exit_0_and_are_printed_as_warnings(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dated.jinja").write_text("Intro.\nToday: ${{ current_date }}\n")
    assert cli_main(["lint", "dated.jinja"]) == 0
    assert "dated.jinja:2:12: warning: cache_volatile:" in capsys.readouterr().out


# -- no_printed_form --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "column"),
    [
        ("${% set j = joiner(', ') %}${{ j() }}${{ j }}", 42),
        ("${% set c = cycler('a', 'b') %}${{ c.next }}", 38),
        ("${% macro m() %}x${% endmacro %}${{ m }}", 37),
        ("${% for i in [1] %}${{ loop }}${% endfor %}", 24),
        ("${% for i in [1] %}${{ loop.cycle }}${% endfor %}", 29),
        ("${{ range }}", 5),
    ],
)
def test_printing_a_value_with_no_printed_form_is_an_error_at_its_name(source, column):
    assert found(source, "no_printed_form") == [(1, column, "error")]
    with pytest.raises(Exception, match="no printed form"):
        engine().render(source, {}, "custom", strict=True)


@pytest.mark.parametrize(
    "source",
    [
        "${% set j = joiner(', ') %}${% for i in [1, 2] %}${{ j() }}${{ i }}${% endfor %}",
        "${% set c = cycler('a', 'b') %}${{ c.next() }}${{ c.current }}",
        "${% macro m() %}x${% endmacro %}${{ m() }}",
        "${% for i in [1] %}${{ loop.index }}${{ loop.cycle('a', 'b') }}${% endfor %}",
        "${% set ns = namespace(a=1) %}${{ ns }}${{ ns.a }}",
    ],
)
def test_values_that_print_are_not_findings(source):
    assert found(source, "no_printed_form") == []
    engine().render(source, {}, "custom", strict=True)


def test_a_name_set_again_may_hold_something_printable_by_then():
    assert found("${% set j = joiner() %}${% set j = 'x' %}${{ j }}", "no_printed_form") == []


# -- unknown filters and tests at render time ------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "column", "suggestion"),
    [
        ("${% if beta %}${{ os_name | uper }}${% endif %}", 29, "upper"),
        ("ok ${{ os_name | uper }}", 18, "upper"),
        ("${% if beta %}${% if os_name is evn %}x${% endif %}${% endif %}", 33, "even"),
    ],
)
def test_an_unknown_filter_or_test_fails_the_render_at_its_name_whatever_branch_runs(source, column, suggestion):
    with pytest.raises(TemplateSyntax) as caught:
        engine().render(source, {"beta": False, "os_name": "linux"}, "custom", strict=True)
    data = caught.value.data
    assert (data["line"], data["column"], data["reason"], data["suggestions"]) == (1, column, "unknown_name", [suggestion])
    [finding] = lint(source, strict=False)
    assert (finding.line, finding.column, finding.kind, finding.message) == (1, column, "syntax", data["cause"])


def test_an_unknown_filter_in_a_custom_template_is_template_syntax_on_the_door():
    with pytest.raises(LocalError) as caught:
        call_in_process("prompt/render", {"context": {"system_prompt": {"custom": "x${% if false %}${{ 1 | shout }}${% endif %}"}}})
    assert caught.value.code == -32020 and caught.value.kind == "template_syntax"
    assert caught.value.data["reason"] == "unknown_name" and caught.value.data["column"] == 25


# -- empty tool names -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_tool_name_is_refused_with_its_own_kind(name):
    for method in ("prompt/render", "prompt/vars"):
        with pytest.raises(LocalError) as caught:
            call_in_process(method, {"tools": {"by_kind": {"read": "read_file", "plan": name}}})
        assert caught.value.code == -32602 and caught.value.kind == EmptyToolName.kind
        assert caught.value.data["field"] == "tools.by_kind.plan" and caught.value.data["tool_kind"] == "plan"


def test_tool_plan_with_no_name_on_the_command_line_is_an_input_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli_main(["render", "--tool", "plan="]) == 2
    assert "empty_tool_name" in capsys.readouterr().err
    (tmp_path / "tools.yaml").write_text('plan: ""\n')
    assert cli_main(["render", "--tools", "tools.yaml"]) == 2
    assert "tools.by_kind.plan" in capsys.readouterr().err


def test_an_empty_tool_name_over_the_wire(shared_served):
    reply = shared_served.request("prompt/render", {"tools": {"by_kind": {"plan": ""}}})
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["kind"] == "empty_tool_name"
    reply = shared_served.request("prompt/render", {"context": {"system_prompt": {"custom": "${% if false %}${{ 1 | shout }}${% endif %}x"}}})
    assert reply["error"]["data"]["reason"] == "unknown_name"
    reply = shared_served.request("prompt/lint", {"template": "${{ current_date }}\n${% macro m() %}${% endmacro %}${{ m }}"})
    assert [(v["line"], v["kind"], v["severity"]) for v in reply["result"]["violations"]] == [(1, "cache_volatile", "warning"), (2, "no_printed_form", "error")]


# -- the command line: context errors, snapshots, diff --template, vars -----------------------------


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.jinja").write_text("You are ${{ system_prompt_label }}.\nOn ${{ os_name }}.\n")
    (tmp_path / "new.jinja").write_text("You are ${{ system_prompt_label }}.\nOn ${{ os_name }}, carefully.\n")
    (tmp_path / "linux.yaml").write_text("os_name: linux\n")
    (tmp_path / "mac.json").write_text('{"os_name": "mac"}\n')
    (tmp_path / "bad.yaml").write_text("os_name: linux\nrole_summaries:\n  - fine\n  - 3\n")
    return tmp_path


def test_a_bad_field_in_a_context_file_names_the_file_and_its_line(here, capsys):
    assert cli_main(["render", "--context", "bad.yaml"]) == 2
    assert "bad.yaml:4: invalid prompt context field 'role_summaries.1'" in capsys.readouterr().err
    (here / "typo.json").write_text('{\n  "os_name": "linux",\n  "promt_mode": "full"\n}\n')
    assert cli_main(["render", "--context", "typo.json"]) == 2
    err = capsys.readouterr().err
    assert "typo.json:3: unknown prompt context field 'promt_mode'" in err and "prompt_mode" in err


def test_snapshots_report_every_bad_context_and_still_write_the_others(here, capsys):
    (here / "worse.json").write_text('{"audience": "everyone"}\n')
    argv = ["render", "--override", "custom:old.jinja", "--snapshot", "snaps", "--context", "linux.yaml", "--context", "bad.yaml", "--context", "worse.json", "--context", "mac.json"]
    assert cli_main([*argv, "--update"]) == 2
    out, err = capsys.readouterr()
    assert sorted(p.name for p in (here / "snaps").iterdir()) == ["linux.txt", "mac.txt"]
    assert "bad.yaml:4:" in err and "worse.json:1:" in err
    assert "failed   snaps/bad.txt" in out and "2 of 4 contexts did not render" in out
    assert cli_main(argv) == 2  # the good ones compare the same; the bad ones still fail
    out, _ = capsys.readouterr()
    assert "same     snaps/linux.txt" in out and "same     snaps/mac.txt" in out


def test_diff_template_compares_two_versions_over_each_context(here, capsys):
    assert cli_main(["diff", "--template", "old.jinja", "new.jinja", "--context", "linux.yaml", "--context", "mac.json"]) == 1
    out = capsys.readouterr().out
    assert "=== linux.yaml" in out and "-On linux." in out and "+On linux, carefully." in out
    assert "=== mac.json" in out and "+On mac, carefully." in out
    assert out.endswith("old.jinja -> new.jinja over 2 contexts: 2 differ, 0 identical\n")
    assert cli_main(["diff", "--template", "old.jinja", "old.jinja"]) == 0
    assert capsys.readouterr().out.endswith("over 1 context: 0 differ, 1 identical\n")


def test_diff_template_reports_a_bad_context_and_compares_the_rest(here, capsys):
    assert cli_main(["diff", "--template", "old.jinja", "new.jinja", "--context", "bad.yaml", "--context", "mac.json"]) == 2
    out, err = capsys.readouterr()
    assert err.count("bad.yaml:4:") == 1 and "+On mac, carefully." in out and "1 differ, 0 identical, 1 failed" in out


def test_diff_of_two_contexts_still_works_and_refuses_context_without_template(here, capsys):
    assert cli_main(["diff", "linux.yaml", "mac.json", "--override", "custom:old.jinja"]) == 1
    assert "+On mac." in capsys.readouterr().out
    assert cli_main(["diff", "linux.yaml", "mac.json", "--context", "bad.yaml"]) == 2
    assert cli_main(["diff", "--template", "old.jinja", "new.jinja", "--override", "codex"]) == 2


def test_vars_lists_what_the_templates_read_and_what_this_render_leaves_undefined(here, capsys):
    (here / "tools.jinja").write_text("${% if tools.by_kind.read %}${{ tools.by_kind.read }}${% endif %}${% for k, v in tools.by_kind.items() %}${{ k }}${% endfor %}${{ params.edit.old_string }}")
    assert cli_main(["vars", "--override", "custom:tools.jinja", "--tool", "read=cat", "--json"]) == 0
    import json

    reads = json.loads(capsys.readouterr().out)["reads"]
    assert reads == [
        {"template": "custom", "path": "tools.by_kind.read", "defined": True},
        {"template": "custom", "path": "tools.by_kind", "defined": True},
        {"template": "custom", "path": "params.edit.old_string", "defined": False},
    ]
    assert cli_main(["vars", "--override", "custom:tools.jinja"]) == 0
    out = capsys.readouterr().out
    assert "custom  tools.by_kind.read  (not defined)" in out and "custom  tools.by_kind\n" in out


def test_prompt_vars_lists_the_shipped_template_reads_and_a_body_apart():
    result = call_in_process("prompt/vars", {"context": {"prompt_body": "Also ${{ beta_flag }}."}, "tools": {"by_kind": {"read": "cat"}}})
    by_template = {(r["template"], r["path"]): r["defined"] for r in result["reads"]}
    assert by_template[("primary", "tools.by_kind.read")] is True and by_template[("primary", "system_prompt_label")] is True
    assert by_template[("body", "beta_flag")] is False
    assert not any(r["path"] in ("current_date", "working_directory") for r in result["reads"])
