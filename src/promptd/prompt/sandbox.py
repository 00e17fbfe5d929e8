"""The sandbox templates render in: Jinja's immutable sandbox with the dialect's delimiters and
rules (a mapping's attribute is its key, strict or lenient undefined, map literals in key order)
and every operation that can build a large value held to limits.py's bounds.

Domain layer: must not import promptd.rpc or promptd.methods. Imports jinja2 at module level, so
it is imported with the engine (lazily).
"""

from __future__ import annotations

import operator
import types
from collections.abc import Callable, Iterable, Mapping
from functools import partial, update_wrapper
from typing import Any

from jinja2 import Undefined, UndefinedError, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.nodes import Concat
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment, safe_range
from jinja2.utils import Namespace, missing
from markupsafe import Markup

from promptd.prompt import limits
from promptd.prompt.dialect import in_key_order, install_reference_dialect, reference_number_op, reference_text
from promptd.prompt.filters import bounded_filters
from promptd.prompt.formatters import BoundedEscapeFormatter, BoundedFormatter

# Rendered output above this is refused: a loop in a caller's template must not be able to grow
# one prompt until the process runs out of memory. 4 MiB is hundreds of times any real prompt.
# Every single value a template builds is held to the same cap (limits.py), before it is built.
MAX_OUTPUT_CHARS = limits.MAX_TEXT_CHARS
# Dict methods a template may still call by attribute (`tools.by_kind.items()`). The reference
# engine refuses them (the lint warns: not_portable); they stay for templates written for promptd.
# Every other attribute of a mapping is a key lookup; see PromptEnvironment.getattr.
MAPPING_METHODS = frozenset({"items", "keys", "values", "get"})
# Classes whose static methods a value exposes (`'x'.maketrans`): such a method's __self__ is None.
STATIC_METHOD_OWNERS: Mapping[str, type] = {"str": str, "bytes": bytes}


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
        # Jinja's own wrapper with a formatter that bounds every field and the total (formatters.py).
        if not isinstance(value, (types.MethodType, types.BuiltinMethodType)) or value.__name__ not in ("format", "format_map"):
            return None
        owner = value.__self__
        if not isinstance(owner, str):
            return None
        is_format_map = value.__name__ == "format_map"
        formatter: BoundedFormatter = BoundedEscapeFormatter(self, escape=owner.escape) if isinstance(owner, Markup) else BoundedFormatter(self)

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


def build_environment(strict: bool) -> PromptEnvironment:
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
        cache_size=0,  # we keep our own, bounded compile cache (engine.py)
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
