"""The template dialect: Jinja2 with `${{ }}`, `${% %}` and `${# #}`, rendered in the sandbox.

Domain layer: must not import promptd.rpc or promptd.methods. Imports jinja2 at module level, so
it is itself imported lazily (only when a prompt method or command first renders or lints).

The dialect matches the reference implementation's engine (MiniJinja with the same delimiters and
its defaults): no autoescape, no trim_blocks / lstrip_blocks, the template's final newline dropped,
and a template with none of `${{`, `${%` and `${#` returned verbatim. Templates written for it
therefore render byte for byte the same here, with one deliberate exception: undefined values.
The reference is lenient (a misspelled name renders as empty text); promptd renders strictly by
default (docs/templates.md, "Strict undefined"): a name no one defined is an error naming it, its
line and column, and the names it was probably meant to be; a missing key of a mapping (a tool
kind the host did not send) is still false in a condition, but cannot be printed or iterated.

Every template source, from any door, goes through `normalize` first (one text path): a leading
byte order mark is dropped and CRLF / CR line ends become LF.
"""

from __future__ import annotations

import threading
import types
from collections import OrderedDict
from collections.abc import Mapping
from io import StringIO
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator

from promptd.errors import TemplateSyntax
from promptd.prompt import codecache, limits
from promptd.prompt.failures import COMPILE_FAILURES, compile_error, render_error
from promptd.prompt.sandbox import PromptEnvironment, build_environment

# Compiled templates kept: the three shipped ones plus a working set of callers' custom templates
# and bodies. Bounded, because those come from callers and could otherwise grow without end.
CACHE_ENTRIES = 64
# A comment marker counts: a template whose only markup is `${# #}` still has its comments
# removed (comments never reach the model, whatever else the template holds).
MARKERS = ("${{", "${%", "${#")
BOM = "\ufeff"


def normalize(source: str) -> str:
    """The one text path every template and body takes, whichever door it came through: a leading
    byte order mark removed, CRLF and lone CR turned into LF. Jinja already writes LF for text it
    renders; doing it here too makes a template without markers (returned verbatim) agree with one
    that has them, and the wire agree with the CLI. Returns `source` itself when nothing changes,
    so the compile cache still finds a shipped template by identity."""
    if source.startswith(BOM):
        source = source[1:]
    if "\r" in source:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    return source


def is_templated(source: str) -> bool:
    """False for text that holds no variable, block or comment marker: such text is returned
    verbatim."""
    return any(marker in source for marker in MARKERS)


class Engine:
    """Compiles and renders dialect templates. One per process; its two Jinja environments
    (lenient and strict undefined, otherwise identical) are built once and never changed."""

    def __init__(self) -> None:
        self.environment = build_environment(strict=False)
        self.strict_environment = build_environment(strict=True)
        self._cache: OrderedDict[tuple[bool, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def environment_for(self, strict: bool) -> PromptEnvironment:
        return self.strict_environment if strict else self.environment

    # -- compiling -------------------------------------------------------------------------------
    def compile(self, source: str, name: str, *, cache: bool = True, strict: bool = False, persist: bool = False) -> Any:
        """The compiled template; raises TemplateSyntax naming the template, line, column and cause.

        With `cache=False` nothing about the template is kept (the sealed Apply-Patch template).
        With `persist=True` (the shipped templates only) its code is also kept on disk for the next
        process (codecache.py); never together with `cache=False`."""
        source = normalize(source)
        key = (strict, source)
        if cache:
            with self._lock:
                hit = self._cache.get(key)
                if hit is not None:
                    self._cache.move_to_end(key)
                    return hit
        persist = persist and cache
        env = self.environment_for(strict)
        code = codecache.load(source, name, strict) if persist else None
        if code is None:
            tree = parse(env, source, name)
            # The lint finds these itself (all of them, not the first), before its own compile.
            _refuse_unknown_names(env, source, tree, name)
            code, _ = compile_tree(env, source, tree, name)
            if persist:
                codecache.store(source, name, strict, code)
        template = env.template_class.from_code(env, code, env.make_globals(None), None)
        if cache:
            with self._lock:
                self._cache[key] = template
                self._cache.move_to_end(key)
                while len(self._cache) > CACHE_ENTRIES:
                    self._cache.popitem(last=False)
        return template

    def is_cached(self, source: str, *, strict: bool = False) -> bool:
        with self._lock:
            return (strict, normalize(source)) in self._cache

    # -- rendering -------------------------------------------------------------------------------
    def render(self, source: str, variables: Mapping[str, Any], name: str, *, cache: bool = True, strict: bool = False, persist: bool = False) -> str:
        """Renders `source` with `variables`; raises TemplateSyntax or TemplateRender naming the
        template, line, column and cause (never returns an empty string in place of a failure)."""
        source = normalize(source)
        if not is_templated(source):
            return source
        template = self.compile(source, name, cache=cache, strict=strict, persist=persist)
        try:
            with limits.render_budget():
                rendered: str = template.render(variables)
                return rendered
        except Exception as exc:  # noqa: BLE001 - whatever a template does wrong is a render error
            # Besides Jinja's own errors: filters and operators failing on the data (`1 + 'a'`,
            # `1 // 0`, a bad format string). None of them may surface as an internal error.
            raise render_error(exc, name, exc.__traceback__, source, variables, self.environment_for(strict)) from None


def parse(env: Any, source: str, name: str) -> nodes.Template:
    """The syntax tree of `source`; raises TemplateSyntax (compile_error)."""
    try:
        return env.parse(source, name, name)  # type: ignore[no-any-return]
    except COMPILE_FAILURES as exc:
        raise compile_error(env, source, name, exc) from None


def compile_tree(env: Any, source: str, tree: nodes.Template, name: str, generator_class: type[CodeGenerator] | None = None) -> tuple[types.CodeType, CodeGenerator]:
    """Jinja's code generation and Python's compile of `tree`, as Environment.compile does them
    (with `generator_class` in place of the environment's own: the lint's, which also collects
    names), and the generator; raises TemplateSyntax (compile_error)."""
    stream = StringIO()
    generator = (generator_class or env.code_generator_class)(env, name, name, stream, optimized=env.optimized)
    try:
        generator.visit(tree)
        return compile(stream.getvalue(), name, "exec"), generator
    except COMPILE_FAILURES as exc:
        raise compile_error(env, source, name, exc, generator) from None


def _refuse_unknown_names(env: Any, source: str, tree: nodes.Template, name: str) -> None:
    """An unknown filter or test is a compile error wherever it is (unknowns.py says why), at
    its own name, with "did you mean"."""
    from promptd.prompt import unknowns

    found = unknowns.find(env, tree)
    if not found:
        return
    from promptd.prompt import positions

    first = found[0]
    column = positions.column_of_name(env, source, first.line, first.name, attribute=False) or positions.first_tag_column(source, first.line)
    raise TemplateSyntax(
        f"template {name!r} line {first.line}, column {column}: {first.cause}",
        template=name,
        line=first.line,
        column=column,
        cause=first.cause,
        reason=unknowns.REASON,
        name=first.name,
        suggestions=first.suggestions,
    )


_ENGINE: Engine | None = None
_ENGINE_LOCK = threading.Lock()


def engine() -> Engine:
    """The process-wide engine, built on first use."""
    global _ENGINE
    if _ENGINE is None:
        with _ENGINE_LOCK:
            if _ENGINE is None:
                _ENGINE = Engine()
    return _ENGINE
