"""Templates that Jinja parses but Python cannot compile (more than 20 nested blocks, hundreds of
chained filters, deeply nested brackets) are template errors wherever they are compiled: a render
of a custom template (in the render worker), of a sealed one (in-process), the lint, and the
vault commands. Never a crashed worker, an internal error or a traceback."""

from __future__ import annotations

import contextlib
import io
import os

import pytest
from conftest import call_in_process

from promptd.cli.main import main as cli_main
from promptd.errors import TemplateSyntax
from promptd.local import Local, LocalError
from promptd.prompt import lint, vault
from promptd.prompt.engine import engine

# Python allows 20 statically nested blocks: each `for` is one.
NESTED_FOR = "".join(f"${{% for i{n} in [1] %}}" for n in range(25)) + "x" + "${% endfor %}" * 25
# Each filter is a nested call in the compiled code: 300 pass Python's limit of 200.
CHAINED_FILTERS = "${{ 'a'" + " | lower" * 300 + " }}"
# Jinja's recursive parser gives up first (RecursionError).
NESTED_PARENTHESES = "${{ " + "(" * 200 + "1" + ")" * 200 + " }}"
SHAPES = {"nested_for": NESTED_FOR, "chained_filters": CHAINED_FILTERS, "nested_parentheses": NESTED_PARENTHESES}


def _failure(method: str, params: dict) -> LocalError:
    with pytest.raises(LocalError) as caught:
        call_in_process(method, params)
    return caught.value


@pytest.mark.parametrize("source", SHAPES.values(), ids=SHAPES.keys())
def test_a_custom_template_python_cannot_compile_answers_template_syntax(source):
    error = _failure("prompt/render", {"context": {"system_prompt": {"custom": source}}})
    assert (error.code, error.kind, error.data["template"]) == (-32020, "template_syntax", "custom")


@pytest.mark.parametrize("source", SHAPES.values(), ids=SHAPES.keys())
def test_a_body_python_cannot_compile_answers_template_syntax(source):
    error = _failure("prompt/render", {"context": {"prompt_body": source}})
    assert (error.code, error.kind, error.data["template"]) == (-32020, "template_syntax", "body")


@pytest.mark.parametrize("source", SHAPES.values(), ids=SHAPES.keys())
def test_the_lint_reports_what_python_cannot_compile_as_a_syntax_finding(source):
    violations = call_in_process("prompt/lint", {"template": source})["violations"]
    assert [v["kind"] for v in violations] == ["syntax"]
    assert all(v["line"] >= 1 and v["column"] >= 1 for v in violations)


def test_the_error_names_the_template_line_of_the_block_python_refused():
    source = "intro\n" + "".join(f"  ${{% for i{n} in [1] %}}\n" for n in range(25)) + "x" + "${% endfor %}" * 25
    with pytest.raises(TemplateSyntax) as caught:
        engine().compile(source, "custom", cache=False)
    # Line 1 is the intro; the 21st `for` is the first Python refuses.
    assert (caught.value.data["line"], caught.value.data["column"]) == (22, 3)
    [finding] = lint.lint(source)
    assert (finding.kind, finding.line) == ("syntax", 22)


def test_a_compile_limit_found_by_recursion_has_no_position_on_the_wire():
    error = _failure("prompt/render", {"context": {"system_prompt": {"custom": NESTED_PARENTHESES}}})
    assert error.data["line"] is None and error.data["column"] is None


def test_the_error_quotes_nothing_of_the_template():
    secret = "SECRET-WORDS"
    source = "".join(f"${{% for {secret.lower().replace('-', '_')}{n} in [1] %}}" for n in range(25)) + secret + "${% endfor %}" * 25
    with pytest.raises(TemplateSyntax) as caught:
        engine().compile(source, "custom", cache=False)
    assert "secret" not in caught.value.message.lower() and "secret" not in str(caught.value.to_data()).lower()


def test_a_normal_custom_template_still_renders():
    assert call_in_process("prompt/render", {"context": {"system_prompt": {"custom": "ok ${{ 1 + 1 }}"}}})["text"] == "ok 2"


# -- sealed templates: rendered in-process, sealed and verified by the CLI ---------------------------


def _key_file(tmp_path) -> tuple[str, bytes]:
    key = vault.new_key()
    path = tmp_path / "vault.key"
    path.write_text(key.hex())
    os.chmod(path, 0o600)
    return str(path), key


@pytest.mark.parametrize("source", [NESTED_FOR, CHAINED_FILTERS], ids=["nested_for", "chained_filters"])
def test_a_sealed_template_python_cannot_compile_answers_template_syntax(tmp_path, source):
    key_file, key = _key_file(tmp_path)
    sealed = tmp_path / "team.sealed"
    sealed.write_bytes(vault.seal(source.encode(), key, "team"))
    door = Local({"vault": {"key_file": key_file, "templates": {"team": str(sealed)}}})
    with pytest.raises(LocalError) as caught:
        door.call("prompt/render", {"context": {"system_prompt": {"sealed": "team"}}})
    assert (caught.value.code, caught.value.kind) == (-32020, "template_syntax")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("source", [NESTED_FOR, CHAINED_FILTERS, NESTED_PARENTHESES], ids=["nested_for", "chained_filters", "nested_parentheses"])
def test_vault_seal_of_a_template_python_cannot_compile_reports_a_finding_and_exits_1(tmp_path, source):
    key_file, _ = _key_file(tmp_path)
    plain = tmp_path / "deep.jinja"
    plain.write_text(source)
    out = tmp_path / "deep.sealed"
    code, stdout, stderr = _cli("vault", "seal", str(plain), "-o", str(out), "--key-file", key_file)
    assert code == 1 and ":syntax:" in stdout.replace(" ", "") and not out.exists()
    assert "Traceback" not in stdout + stderr


def test_vault_verify_of_a_sealed_template_python_cannot_compile_reports_a_finding_and_exits_1(tmp_path):
    key_file, key = _key_file(tmp_path)
    sealed = tmp_path / "deep.sealed"
    sealed.write_bytes(vault.seal(NESTED_FOR.encode(), key, "team"))
    code, stdout, stderr = _cli("vault", "verify", str(sealed), "--key-file", key_file)
    assert code == 1 and "syntax" in stdout and "Traceback" not in stdout + stderr


@pytest.mark.parametrize("source", [NESTED_FOR, NESTED_PARENTHESES], ids=["nested_for", "nested_parentheses"])
def test_the_cli_render_and_lint_report_a_compile_limit_as_a_template_error(tmp_path, source):
    deep = tmp_path / "deep.jinja"
    deep.write_text(source)
    code, stdout, stderr = _cli("render", "--override", f"custom:{deep}")
    assert code == 2 and "(template_syntax)" in stderr and "Traceback" not in stdout + stderr
    code, stdout, stderr = _cli("lint", str(deep))
    assert code == 1 and ": syntax: " in stdout and "Traceback" not in stdout + stderr
