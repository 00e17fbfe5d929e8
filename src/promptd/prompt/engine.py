"""The template dialect: Jinja2 with `${{ }}`, `${% %}` and `${# #}`, rendered in the sandbox.

Domain layer: must not import promptd.rpc or promptd.methods. Imports jinja2 at module level, so
it is itself imported lazily (only when a prompt method or command first renders or lints).

The dialect matches the reference implementation's engine (MiniJinja with the same delimiters and
its defaults): no autoescape, no trim_blocks / lstrip_blocks, the template's final newline dropped,
lenient undefined values, and a template with neither `${{` nor `${%` returned verbatim. Templates
written for it therefore render byte for byte the same here.
"""

from __future__ import annotations

import operator
import threading
import types
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from functools import update_wrapper
from types import TracebackType
from typing import Any

from jinja2 import TemplateSyntaxError, Undefined
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.nodes import Concat
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from markupsafe import EscapeFormatter, Markup

from promptd.errors import TemplateRender, TemplateSyntax
from promptd.prompt import limits
from promptd.prompt.filters import bounded_filters, install_reference_dialect, lipsum, reference_text

# Rendered output above this is refused: a loop in a caller's template must not be able to grow
# one prompt until the process runs out of memory. 4 MiB is hundreds of times any real prompt.
# Every single value a template builds is held to the same cap (limits.py), before it is built.
MAX_OUTPUT_CHARS = limits.MAX_TEXT_CHARS
# Compiled templates kept: the three shipped ones plus a working set of callers' custom templates
# and bodies. Bounded, because those come from callers and could otherwise grow without end.
CACHE_ENTRIES = 64
# Dict methods a template may still call by attribute (`tools.by_kind.items()`), as MiniJinja
# allows. Every other attribute of a mapping is a key lookup; see PromptEnvironment.getattr.
MAPPING_METHODS = frozenset({"items", "keys", "values", "get"})
MARKERS = ("${{", "${%")
# Classes whose static methods a value exposes (`'x'.maketrans`): such a method's __self__ is None.
STATIC_METHOD_OWNERS: Mapping[str, type] = {"str": str, "bytes": bytes}


def is_templated(source: str) -> bool:
    """False for text that holds no variable or block marker: such text is returned verbatim."""
    return MARKERS[0] in source or MARKERS[1] in source


class _Generator(CodeGenerator):
    """Jinja's code generator, with `~` compiled to PromptEnvironment.join_text so that its size
    is checked before the operands are joined."""

    def visit_Concat(self, node: Concat, frame: Frame) -> None:
        self.write("environment.join_text((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class PromptEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox plus two rules of the dialect, and size bounds.

    Attribute access on a mapping is a key lookup first (so a tool kind named `items` is the tool,
    not the dict method), and a missing key is undefined (lenient). Every operation that can build
    a value much larger than its inputs (operators, `~`, str methods, formatting, filters) is
    checked against limits.py before it runs, and so is the whole output.
    """

    intercepted_binops = frozenset({"*", "**", "%", "+"})
    code_generator_class = _Generator

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, Mapping):
            if attribute in obj:
                return obj[attribute]
            if attribute not in MAPPING_METHODS:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        # Jinja's sandbox returns an undefined value here, which a lenient template prints as
        # empty text: a probe for Python internals would then pass silently. It is an error.
        raise SecurityError(f"access to attribute {attribute!r} of a {type(obj).__name__!r} value is not allowed")

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "**":
            limits.check_power(left, right)
            try:
                return operator.pow(left, right)
            except OverflowError:
                # A float result out of range (1e300 ** 2, or a huge integer as a float).
                raise limits.refuse("the result of **") from None
        if operator_name == "*":
            limits.check_product(left, right)
            return operator.mul(left, right)
        if operator_name == "%":
            limits.check_percent(left, right)
            return operator.mod(left, right)
        limits.check_sum(left, right)
        return operator.add(left, right)

    def join_text(self, values: tuple[Any, ...]) -> str:
        """The `~` operator (compiled to this call by _Generator)."""
        limits.check_concat(values)
        return "".join(map(reference_text, values))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - Jinja's signature
        # Every call a template makes passes here, however it reached the method (attribute,
        # subscript, the attr filter): methods of str, bytes and int values (and of those classes)
        # are checked by name against limits.py's lists, and any name not listed is refused.
        if isinstance(__obj, (types.BuiltinMethodType, types.MethodType)):
            owner = getattr(__obj, "__self__", None)
            name = getattr(__obj, "__name__", "")
            if owner is None:
                # A static method reached through a value ('x'.maketrans) names no owner but its
                # qualified name does.
                owner = STATIC_METHOD_OWNERS.get(getattr(__obj, "__qualname__", "").partition(".")[0])
            if isinstance(owner, (str, bytes)) or (isinstance(owner, type) and issubclass(owner, (str, bytes))):
                args = limits.check_text_method(owner, name, args, kwargs)
            elif isinstance(owner, int) or (isinstance(owner, type) and issubclass(owner, int)):
                limits.check_int_method(owner, name, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        # Jinja's own wrapper with a formatter that bounds every field and the total (below).
        if not isinstance(value, (types.MethodType, types.BuiltinMethodType)) or value.__name__ not in ("format", "format_map"):
            return None
        owner = value.__self__
        if not isinstance(owner, str):
            return None
        is_format_map = value.__name__ == "format_map"
        formatter: _BoundedFormatter = _BoundedEscapeFormatter(self, escape=owner.escape) if isinstance(owner, Markup) else _BoundedFormatter(self)

        def wrapper(*args: Any, **kwargs: Any) -> str:
            if is_format_map:
                if kwargs:
                    raise TypeError("format_map() takes no keyword arguments")
                if len(args) != 1:
                    raise TypeError(f"format_map() takes exactly one argument ({len(args)} given)")
                kwargs = args[0]
                args = ()
            return type(owner)(formatter.vformat(owner, args, kwargs))

        return update_wrapper(wrapper, value)


class _BoundedFormatter(SandboxedFormatter):
    """str.format in the sandbox, refusing a field (`{:>300000000}`, `{:.300000000f}`, `{!r}` of
    a huge list) or a total over the cap before the text is built."""

    factor = 1
    total = 0

    def vformat(self, format_string: str, args: Any, kwargs: Any) -> str:
        self.total = len(format_string)
        return super().vformat(format_string, args, kwargs)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion in ("r", "a"):
            limits.require(limits.repr_size(value), "a formatted field")
        elif conversion == "s":
            limits.require_text(value, "a formatted field")
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        size = limits.spec_size(value, format_spec) * self.factor
        self.total += size
        limits.require(self.total, "the result of format()", charge=False)
        limits.require(size, "a formatted field")
        return super().format_field(value, format_spec)


class _BoundedEscapeFormatter(_BoundedFormatter, EscapeFormatter):
    factor = limits.ESCAPE_FACTOR


def _concat(chunks: Iterable[str]) -> str:
    parts = []
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_OUTPUT_CHARS:
            raise SecurityError(f"rendered output exceeds {MAX_OUTPUT_CHARS} characters")
        parts.append(chunk)
    return "".join(parts)


def _build_environment() -> PromptEnvironment:
    env = PromptEnvironment(
        block_start_string="${%",
        block_end_string="%}",
        variable_start_string="${{",
        variable_end_string="}}",
        comment_start_string="${#",
        comment_end_string="#}",
        # Line statements stay off: `#` and `%` at line starts are common in prompts (Markdown).
        line_statement_prefix=None,
        line_comment_prefix=None,
        trim_blocks=False,
        lstrip_blocks=False,
        keep_trailing_newline=False,
        autoescape=False,
        undefined=Undefined,
        cache_size=0,  # we keep our own, bounded compile cache below
        auto_reload=False,
    )
    env.concat = _concat  # type: ignore[method-assign]
    env.filters = bounded_filters(env.filters)
    env.globals["lipsum"] = lipsum
    install_reference_dialect(env)  # output formatting, filters and tests as the reference's engine
    return env


class Engine:
    """Compiles and renders dialect templates. One per process; the Jinja environment is built
    once and never changed afterwards."""

    def __init__(self) -> None:
        self.environment = _build_environment()
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    # -- compiling -------------------------------------------------------------------------------
    def compile(self, source: str, name: str, *, cache: bool = True) -> Any:
        """The compiled template; raises TemplateSyntax naming the template, line and cause.

        With `cache=False` nothing about the template is kept (the sealed Apply-Patch template)."""
        if cache:
            with self._lock:
                hit = self._cache.get(source)
                if hit is not None:
                    self._cache.move_to_end(source)
                    return hit
        env = self.environment
        try:
            code = env.compile(source, name=name, filename=name)
        except TemplateSyntaxError as exc:
            line = exc.lineno
            cause = exc.message or "syntax error"
            # The exception holds the whole source; drop it before it travels anywhere.
            exc.source = None
            raise TemplateSyntax(f"template {name!r} line {line}: {cause}", template=name, line=line, cause=cause) from None
        template = env.template_class.from_code(env, code, env.make_globals(None), None)
        if cache:
            with self._lock:
                self._cache[source] = template
                self._cache.move_to_end(source)
                while len(self._cache) > CACHE_ENTRIES:
                    self._cache.popitem(last=False)
        return template

    def is_cached(self, source: str) -> bool:
        with self._lock:
            return source in self._cache

    def cached_sources(self) -> list[str]:
        """The sources of every cached template (for audits and tests)."""
        with self._lock:
            return list(self._cache)

    def cached_templates(self) -> list[Any]:
        with self._lock:
            return list(self._cache.values())

    # -- rendering -------------------------------------------------------------------------------
    def render(self, source: str, variables: Mapping[str, Any], name: str, *, cache: bool = True) -> str:
        """Renders `source` with `variables`; raises TemplateSyntax or TemplateRender naming the
        template, line and cause (never returns an empty string in place of a failure)."""
        if not is_templated(source):
            return source
        template = self.compile(source, name, cache=cache)
        try:
            with limits.render_budget():
                return template.render(variables)
        except Exception as exc:  # noqa: BLE001 - whatever a template does wrong is a render error
            # Besides Jinja's own errors: filters and operators failing on the data (`1 + 'a'`,
            # `1 // 0`, a bad format string). None of them may surface as an internal error.
            raise _render_error(exc, name, exc.__traceback__) from None


def _render_error(exc: BaseException, name: str, tb: TracebackType | None) -> TemplateRender:
    line = _template_line(tb, name)
    kind = "security" if isinstance(exc, SecurityError) else type(exc).__name__
    cause = str(exc) or kind
    where = f" line {line}" if line else ""
    return TemplateRender(f"template {name!r}{where}: {cause}", template=name, line=line, cause=cause, error=kind)


def _template_line(tb: TracebackType | None, name: str) -> int | None:
    """The template line of the innermost frame that belongs to the template: Jinja rewrites
    tracebacks so template frames carry the template's file name and line numbers."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == name:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


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
