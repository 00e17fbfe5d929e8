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

import operator
import threading
import types
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from functools import partial, update_wrapper
from io import StringIO
from types import TracebackType
from typing import Any

from jinja2 import TemplateSyntaxError, Undefined, UndefinedError, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.nodes import Concat
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment, SandboxedFormatter, safe_range
from jinja2.utils import Namespace, missing
from markupsafe import EscapeFormatter, Markup

from promptd.errors import TemplateRender, TemplateSyntax
from promptd.prompt import codecache, limits
from promptd.prompt.dialect import in_key_order, install_reference_dialect, reference_number_op, reference_text
from promptd.prompt.filters import bounded_filters
from promptd.prompt.names import suggest

# Rendered output above this is refused: a loop in a caller's template must not be able to grow
# one prompt until the process runs out of memory. 4 MiB is hundreds of times any real prompt.
# Every single value a template builds is held to the same cap (limits.py), before it is built.
MAX_OUTPUT_CHARS = limits.MAX_TEXT_CHARS
# Compiled templates kept: the three shipped ones plus a working set of callers' custom templates
# and bodies. Bounded, because those come from callers and could otherwise grow without end.
CACHE_ENTRIES = 64
# Dict methods a template may still call by attribute (`tools.by_kind.items()`). The reference
# engine refuses them (the lint warns: not_portable); they stay for templates written for promptd.
# Every other attribute of a mapping is a key lookup; see PromptEnvironment.getattr.
MAPPING_METHODS = frozenset({"items", "keys", "values", "get"})
# What compiling a template can raise besides Jinja's own syntax errors: Python's compiler refuses
# code nested deeper than its fixed limits (SyntaxError), Jinja's parser and code generator recurse
# once per level of nesting (RecursionError), and a huge template can exhaust memory.
COMPILE_FAILURES = (TemplateSyntaxError, SyntaxError, RecursionError, MemoryError)
# Python's limits (CPython's CO_MAXBLOCKS and the parser's MAXLEVEL), named in the error: every
# `for`, `if`, `with`, `macro` and `call` block is a nested Python block, and every filter, test or
# call a nested call.
MAX_NESTED_BLOCKS = 20
MAX_NESTED_BRACKETS = 200
# A comment marker counts: a template whose only markup is `${# #}` still has its comments
# removed (comments never reach the model, whatever else the template holds).
MARKERS = ("${{", "${%", "${#")
BOM = "\ufeff"
# Classes whose static methods a value exposes (`'x'.maketrans`): such a method's __self__ is None.
STATIC_METHOD_OWNERS: Mapping[str, type] = {"str": str, "bytes": bytes}


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


class UndefinedValue(UndefinedError):
    """An undefined value was used where a value is needed. Carries the name and the mapping it
    was looked up in (None for a top-level name), so the error can say what was meant."""

    def __init__(self, message: str | None, name: Any, owner: Any) -> None:
        # `name` is the key that was looked up: a string for `a.b` and `a["b"]`, but any value
        # for an index (`items[5]` carries the int 5).
        super().__init__(message)
        self.name = name
        self.owner = owner


class _LenientUndefined(Undefined):
    """The reference's lenient behaviour: empty when printed, false when tested, an error when
    its attributes are read; the error names what was undefined."""

    __slots__ = ()

    def __init__(self, hint: str | None = None, obj: Any = missing, name: str | None = None, exc: Any = UndefinedError) -> None:
        # Jinja raises `exc(message)` from every failing operation; this one also carries the name
        # and the mapping it was looked up in.
        super().__init__(hint, obj, name, partial(UndefinedValue, name=name, owner=None if obj is missing else obj))  # type: ignore[arg-type]  # jinja2 calls exc(message): its stubs want an exception class, any such callable works


class _StrictUndefined(_LenientUndefined):
    """Strict undefined (docs/templates.md). A top-level name that nothing defines fails wherever
    it is used, a condition included (`${% if is_non_interactve %}` must not quietly be false);
    `is defined` and `default(...)` still work on it. A missing key of a mapping
    (`tools.by_kind.web` without a web tool) stays false in a condition and equal to nothing,
    because that is how a template asks whether the host has the tool; printing or iterating it
    fails."""

    __slots__ = ()

    def _top_level(self) -> bool:
        return self._undefined_obj is missing

    def __bool__(self) -> bool:
        if self._top_level():
            self._fail_with_undefined_error()
        return False

    def __eq__(self, other: object) -> bool:
        if self._top_level():
            self._fail_with_undefined_error()
        return type(self) is type(other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return id(type(self))

    __str__ = __iter__ = __len__ = __contains__ = __aiter__ = _LenientUndefined._fail_with_undefined_error
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _LenientUndefined._fail_with_undefined_error
    __lt__ = __le__ = __gt__ = __ge__ = __int__ = __float__ = __neg__ = __pos__ = _LenientUndefined._fail_with_undefined_error


class _Generator(CodeGenerator):
    """Jinja's code generator, with `~` compiled to PromptEnvironment.join_text so that its size
    is checked before the operands are joined; slices compiled to PromptEnvironment.sliced (Jinja
    writes them as plain Python slices, which no sandbox hook sees) so that they are charged to
    the render's budget; and a namespace assignment through PromptEnvironment.keep, so what a
    namespace keeps is charged too."""

    def visit_Concat(self, node: Concat, frame: Frame) -> None:
        self.write("environment.join_text((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def visit_Getitem(self, node: nodes.Getitem, frame: Frame) -> None:
        if not isinstance(node.arg, nodes.Slice):
            super().visit_Getitem(node, frame)
            return
        self.write("environment.sliced(")
        self.visit(node.node, frame)
        self.write(", slice(")
        for index, part in enumerate((node.arg.start, node.arg.stop, node.arg.step)):
            self.write(", " if index else "")
            if part is None:
                self.write("None")
            else:
                self.visit(part, frame)
        self.write("))")

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        # The reference keeps every map in key order (MiniJinja without `preserve_order`): a map
        # literal prints, iterates and lists its items sorted by key, whatever order it was written in.
        self.write("environment.key_ordered(")
        super().visit_Dict(node, frame)
        self.write(")")

    def visit_Const(self, node: nodes.Const, frame: Frame) -> None:
        # Jinja's optimizer folds a literal of constants into one value: its maps are ordered here.
        if isinstance(node.value, (dict, list, tuple)):
            node = nodes.Const(_key_ordered_deep(node.value), lineno=node.lineno)
        super().visit_Const(node, frame)

    def visit_NSRef(self, node: nodes.NSRef, frame: Frame) -> None:
        # Jinja writes `ns[attr] = value` (after checking `ns` is a Namespace); the keeper charges
        # the value, then stores it.
        self.writeline(f"environment.keep({frame.symbols.ref(node.name)})[{node.attr!r}]")


def _key_ordered_deep(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _key_ordered_deep(item) for key, item in in_key_order(value.items())}
    if isinstance(value, (list, tuple)):
        return type(value)(_key_ordered_deep(item) for item in value)
    return value


class _Keeper:
    """A namespace as the target of one assignment: charges what is stored, then stores it."""

    __slots__ = ("_namespace",)

    def __init__(self, namespace: Namespace) -> None:
        self._namespace = namespace

    def __setitem__(self, name: str, value: Any) -> None:
        limits.charge(limits.kept_size(value), "a value kept in a namespace")
        self._namespace[name] = value


class PromptEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox plus two rules of the dialect, and size bounds.

    Attribute access on a mapping is a key lookup first (so a tool kind named `items` is the tool,
    not the dict method), and a missing key is undefined (lenient). Every operation that can build
    a value much larger than its inputs (operators, `~`, str methods, formatting, filters) is
    checked against limits.py before it runs, and so is the whole output.
    """

    intercepted_binops = frozenset({"*", "**", "%", "+", "/"})
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

    def key_ordered(self, mapping: dict[Any, Any]) -> dict[Any, Any]:
        """A map literal (compiled to this call by _Generator), in the reference's key order."""
        return dict(in_key_order(mapping.items()))

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        # `/` and `%` on numbers follow the reference's (Rust's) arithmetic: division by zero is
        # infinite or NaN, an integer remainder is never negative, a float one has the dividend's sign.
        reference = reference_number_op(operator_name, left, right)
        if reference is not None:
            return reference
        if operator_name == "/":
            return operator.truediv(left, right)
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

    def sliced(self, value: Any, index: slice) -> Any:
        """`value[start:stop:step]` (compiled to this call by _Generator), charged to the budget
        before it is built: a slice copies, and a loop keeping slices of a large text would
        otherwise hold many copies of it."""
        limits.charge(limits.slice_size(value, index), "a slice")
        return value[index]

    def keep(self, namespace: Namespace) -> _Keeper:
        """The target of `${% set ns.attr = value %}` (compiled to this call by _Generator)."""
        return _Keeper(namespace)

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
            if name in limits.SAME_SIZE_TEXT_METHODS and isinstance(owner, (str, bytes)):
                # No larger than the text, so not refused before the call; but a copy (strip,
                # split, partition) that a loop may keep, so charged after it.
                result = super().call(__context, __obj, *args, **kwargs)
                if result is not owner:
                    limits.charge(limits.built_size(result), f"the result of {name}()")
                return result
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
    """The output of a template, a macro, a `call` or a block `set`: capped, and charged to the
    render's budget (a macro called in a loop builds its text each time)."""
    parts = []
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_OUTPUT_CHARS:
            raise SecurityError(f"rendered output exceeds {MAX_OUTPUT_CHARS} characters")
        parts.append(chunk)
    limits.charge(total, "the output of a template, macro or block")
    return "".join(parts)


def _bounded_range(*args: int) -> range:
    """Jinja2's sandboxed range(), refused like every other size bound ("security") instead of
    with its own OverflowError."""
    try:
        return safe_range(*args)
    except OverflowError:
        raise limits.refuse(f"a range of more than {MAX_RANGE:,} items") from None


def _build_environment(strict: bool) -> PromptEnvironment:
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
        undefined=_StrictUndefined if strict else _LenientUndefined,
        cache_size=0,  # we keep our own, bounded compile cache below
        auto_reload=False,
    )
    env.concat = _concat  # type: ignore[method-assign]
    # `random` and `lipsum` draw new text on every render: a system prompt must be the same bytes
    # for the same inputs, or every render costs the host its prompt cache. The reference has
    # neither.
    env.filters = bounded_filters({name: f for name, f in env.filters.items() if name != "random"})
    del env.globals["lipsum"]
    env.globals["range"] = _bounded_range
    install_reference_dialect(env)  # output formatting, filters and tests as the reference's engine
    return env


class Engine:
    """Compiles and renders dialect templates. One per process; its two Jinja environments
    (lenient and strict undefined, otherwise identical) are built once and never changed."""

    def __init__(self) -> None:
        self.environment = _build_environment(strict=False)
        self.strict_environment = _build_environment(strict=True)
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
            raise _render_error(exc, name, exc.__traceback__, source, variables, self.environment_for(strict)) from None


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


def compile_error(env: Any, source: str, name: str, exc: BaseException, generator: CodeGenerator | None = None) -> TemplateSyntax:
    """The one place where a template that cannot be compiled becomes TemplateSyntax: Jinja's own
    syntax errors, and the limits of Python's compiler that Jinja does not check (more than 20
    nested blocks, about 200 nested brackets, calls or filters: SyntaxError), of Jinja's recursive
    parser and code generator (RecursionError) and of memory. Every compile (the engine's, the
    lint's, the CLI's and the vault's) goes through parse and compile_tree, so none of these
    reaches a caller as an internal error or ends a render worker."""
    if isinstance(exc, TemplateSyntaxError):
        # The exception holds the whole source; drop it before it travels anywhere.
        exc.source = None
        return syntax_error(env, source, exc, name)
    line = _python_line_to_template(generator, exc.lineno) if isinstance(exc, SyntaxError) and generator is not None else None
    if isinstance(exc, MemoryError):
        cause = "the template is too large to compile"
    elif isinstance(exc, RecursionError) or "nested" in str(getattr(exc, "msg", "")):
        cause = f"nested too deeply to compile (at most {MAX_NESTED_BLOCKS} nested blocks, and about {MAX_NESTED_BRACKETS} nested brackets, calls or filters)"
    else:
        # Never the message's text beyond Python's own words: its `text` is generated code,
        # which quotes the template.
        cause = f"too complex to compile ({getattr(exc, 'msg', type(exc).__name__)})"
    if line is None:
        return TemplateSyntax(f"template {name!r}: {cause}", template=name, line=None, column=None, cause=cause, reason="compile_limit")
    from promptd.prompt import positions

    column = positions.first_tag_column(source, line)
    return TemplateSyntax(f"template {name!r} line {line}, column {column}: {cause}", template=name, line=line, column=column, cause=cause, reason="compile_limit")


def _python_line_to_template(generator: CodeGenerator, python_line: int | None) -> int | None:
    """The template line of a line of generated code, from the generator's debug info (pairs of
    template line and code line, in code order: the last pair at or before the line wins)."""
    if not python_line:
        return None
    found = None
    for template_line, code_line in generator.debug_info:
        if code_line > python_line:
            break
        found = template_line
    return found


def syntax_error(env: Any, source: str, exc: TemplateSyntaxError, name: str) -> TemplateSyntax:
    """The project's error for a template that does not parse or compile, at its line and column
    (an unclosed block at its opening tag)."""
    from promptd.prompt import positions  # error paths only: a render that works never needs it

    line, column, cause = positions.syntax_position(env, source, exc)
    return TemplateSyntax(f"template {name!r} line {line}, column {column}: {cause}", template=name, line=line, column=column, cause=cause)


def _render_error(exc: BaseException, name: str, tb: TracebackType | None, source: str, variables: Mapping[str, Any], env: Any) -> TemplateRender:
    from promptd.prompt import positions

    line = _template_line(tb, name)
    if isinstance(exc, UndefinedValue):
        return _undefined_error(exc, name, line, source, variables, env)
    kind = "security" if isinstance(exc, (SecurityError, MemoryError)) else type(exc).__name__
    # A MemoryError is the render worker's address-space limit (or the machine's): the same
    # refusal as a size bound, since either way the template asked for more than it may have.
    cause = limits.MEMORY_CAUSE if isinstance(exc, MemoryError) else str(exc) or kind
    column = positions.first_tag_column(source, line) if line else None
    where = f" line {line}, column {column}" if line else ""
    return TemplateRender(f"template {name!r}{where}: {cause}", template=name, line=line, column=column, cause=cause, error=kind)


def _undefined_error(exc: UndefinedValue, name: str, line: int | None, source: str, variables: Mapping[str, Any], env: Any) -> TemplateRender:
    """`undefined`: which name, where, and what it was probably meant to be (from the variables
    this render really has, or the keys of the mapping it was looked up in)."""
    from promptd.prompt import positions

    key = exc.name
    # A name reads as `name`; an index or any other key that is not a string as `[5]`.
    named = isinstance(key, str) and bool(key)
    variable = key if named else ("?" if key is None and exc.owner is None else f"[{key!r}]")
    if exc.owner is None:
        candidates = [str(k) for k in variables]
        cause = f"`{variable}` is undefined: no variable of that name"
        if exc.message and "was not provided" in exc.message:
            cause = f"`{variable}` is undefined: the macro was called without it"  # Jinja's hint for a missing macro argument
        column = positions.column_of_name(env, source, line, variable, attribute=False)
    else:
        candidates = [str(k) for k in exc.owner] if isinstance(exc.owner, Mapping) else []
        owner = _path_of(exc.owner, variables) if isinstance(exc.owner, Mapping) else None
        if owner is not None:
            variable = f"{owner}.{variable}" if named else f"{owner}{variable}"
            cause = f"`{variable}` is undefined (`{owner}` has {', '.join(sorted(candidates)[:20]) or 'no keys'}); test it first: `${{% if {variable} %}}`"
        elif named:
            cause = f"`{variable}` is undefined: a {type(exc.owner).__name__} value has no such key or attribute"
        else:
            cause = f"`{variable}` is undefined: a {type(exc.owner).__name__} value has no such index or key"
        column = (positions.column_of_name(env, source, line, key, attribute=True) or positions.column_of_name(env, source, line, key)) if named else None
    suggestions = suggest(key if named else variable, candidates)
    if suggestions:
        cause += "; did you mean " + " or ".join(f"`{s}`" for s in suggestions) + "?"
    column = column or (positions.first_tag_column(source, line) if line else None)
    where = f" line {line}, column {column}" if line else ""
    return TemplateRender(
        f"template {name!r}{where}: {cause}",
        template=name,
        line=line,
        column=column,
        cause=cause,
        error="undefined",
        variable=variable,
        suggestions=suggestions,
    )


def _path_of(owner: Any, variables: Mapping[str, Any]) -> str | None:
    """The dotted name of a mapping among the variables (`tools.by_kind`, `params`,
    `params.edit`), found by identity two levels deep; None when it is not one of them."""
    for name, value in variables.items():
        if value is owner:
            return name
        if isinstance(value, Mapping):
            for key, inner in value.items():
                if inner is owner:
                    return f"{name}.{key}"
    return None


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
