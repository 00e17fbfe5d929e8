"""The template sandbox's call policy: methods of str, bytes and int are denied unless listed with a
bound (prompt/limits.py), and the engine's overrides of Jinja internals are in effect on the Jinja
installed (a Jinja upgrade that renames a hook fails here, not silently in production)."""

from __future__ import annotations

import tomllib
from importlib.metadata import version

import pytest
from conftest import ROOT
from jinja2.compiler import CodeGenerator
from jinja2.environment import Environment
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment
from packaging.requirements import Requirement

from promptd.errors import TemplateRender
from promptd.prompt import limits
from promptd.prompt.engine import Engine
from promptd.prompt.sandbox import PromptEnvironment, _Generator


@pytest.fixture(scope="module")
def engine():
    return Engine()


def render(engine, source, variables=None):
    return engine.render(source, variables or {}, "t")


def assert_refused(engine, source, variables=None):
    with pytest.raises(TemplateRender) as caught:
        render(engine, source, variables)
    assert caught.value.kind == "template_render" and caught.value.data["error"] == "security"


class FutureText(str):
    """A str with a method Python does not have today, as a later release might add one."""

    def shout(self, times):
        return self * times


@pytest.mark.parametrize(
    "source",
    [
        "${{ 'x'.zfill(10**9) }}",
        "${{ ('x\t' * 10).expandtabs(10**8) }}",
        "${{ 'a'.center(10**8) }}",
        "${{ 'x'.__class__ }}",
    ],
)
def test_a_method_that_would_build_too_much_or_reach_internals_is_refused(engine, source):
    assert_refused(engine, source)


def test_a_str_method_not_on_the_list_is_refused_even_when_python_has_it(engine):
    assert_refused(engine, "${{ v.shout(3) }}", {"v": FutureText("x")})


@pytest.mark.parametrize("owner", ["x", b"x", limits.Markup("x"), 7, True, str, bytes, int])
def test_any_unlisted_name_is_refused_whatever_the_owner(owner):
    check = limits.check_int_method if owner is int or isinstance(owner, int) else limits.check_text_method
    with pytest.raises(SecurityError):
        check(owner, "hypothetical_future_method", (), {})


def test_format_is_served_only_by_the_sandboxs_bounded_wrapper_never_raw():
    with pytest.raises(SecurityError):
        limits.check_text_method("{}", "format", (1,), {})
    with pytest.raises(SecurityError):
        limits.check_text_method("{x}", "format_map", ({"x": 1},), {})


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("${{ ' Ab '.upper() }}|${{ ' Ab '.lower() }}|${{ ' Ab '.strip() }}", " AB | ab |Ab"),
        ("${{ 'a-b-c'.replace('-', '+') }}", "a+b+c"),
        ("${{ 'a b c'.split() | join(',') }}", "a,b,c"),
        ("${{ ', '.join(['a', 'b']) }}", "a, b"),
        ("${{ 'prefix'.startswith('pre') }} ${{ 'prefix'.endswith('x') }}", "true true"),
        ("${{ 'Hello {}'.format('world') }} ${{ '{a}'.format_map({'a': 1}) }}", "Hello world 1"),
        ("${{ 'x'.zfill(3) }} ${{ 'ab'.center(6, '*') }} ${{ 'a\tb'.expandtabs(2) }}", "00x **ab** a b"),
        ("${{ 'a1'.isalnum() }} ${{ 'abc'.find('c') }} ${{ 'a,b'.partition(',')[2] }}", "true 2 b"),
        ("${{ 'é'.encode('utf-8').hex() }} ${{ 'ab'.encode().decode() }}", "c3a9 ab"),
        ("${{ 'abc'.translate('abc'.maketrans('a', 'z')) }}", "zbc"),
        ("${{ (255).bit_length() }} ${{ (1).to_bytes(2, 'big').hex() }}", "8 0001"),
        ("${{ ('<i>a</i>' | safe).striptags() }}", "a"),
    ],
)
def test_the_common_bounded_methods_work(engine, source, expected):
    assert render(engine, source) == expected


def test_a_listed_method_is_still_held_to_its_bound(engine):
    assert_refused(engine, "${{ ('x' * 1000).replace('x', 'y' * 10000) }}")
    assert_refused(engine, "${{ ('x' | e).split([['<' * 1000] * 1000] * 1000) }}")


# -- the Jinja internals the engine overrides ---------------------------------------------------


def test_jinja_is_within_the_range_pyproject_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    pins = [Requirement(line) for line in project["dependencies"] if line.lower().startswith("jinja2")]
    assert len(pins) == 1 and pins[0].specifier, "jinja2 must be pinned to a tested range"
    assert pins[0].specifier.contains(version("jinja2"))


@pytest.mark.parametrize(
    ("base", "name"),
    [
        (CodeGenerator, "visit_Concat"),
        (SandboxedEnvironment, "call"),
        (SandboxedEnvironment, "call_binop"),
        (SandboxedEnvironment, "getattr"),
        (SandboxedEnvironment, "unsafe_undefined"),
        (SandboxedEnvironment, "wrap_str_format"),
        (SandboxedEnvironment, "intercepted_binops"),
        (Environment, "code_generator_class"),
        (Environment, "concat"),
    ],
)
def test_every_jinja_member_the_engine_replaces_still_exists_in_jinja(base, name):
    # An override of a name Jinja no longer has (or no longer calls) is dead code: the bound it adds
    # would silently stop applying.
    assert hasattr(base, name), f"jinja2 {version('jinja2')} has no {base.__name__}.{name}"


def test_the_concat_override_is_what_compiled_templates_call(engine):
    assert PromptEnvironment.code_generator_class is _Generator
    assert "visit_Concat" in vars(_Generator)
    code = engine.environment.compile("${{ a ~ b }}", raw=True)
    assert "environment.join_text((" in code and "str_join((" not in code
    assert_refused(engine, "${{ a ~ a ~ a }}", {"a": ["x" * 1000] * 2000})


def test_the_format_override_is_what_templates_reach(engine):
    # Only the engine's wrapper bounds a field's width; Jinja's own would build the text.
    assert_refused(engine, "${{ '{:>300000000}'.format(1) }}")
    assert_refused(engine, "${{ ('{:>300000000}' | attr('format'))(1) }}")
