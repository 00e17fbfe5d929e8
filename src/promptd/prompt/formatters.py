"""str.format in the sandbox: formatters that refuse a field or a total over the size cap
before the text is built.

Domain layer: must not import promptd.rpc or promptd.methods. Imported with the engine (lazily).
"""

from __future__ import annotations

from typing import Any

from jinja2.sandbox import SandboxedFormatter
from markupsafe import EscapeFormatter

from promptd.prompt import limits


class BoundedFormatter(SandboxedFormatter):
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


class BoundedEscapeFormatter(BoundedFormatter, EscapeFormatter):
    factor = limits.ESCAPE_FACTOR
