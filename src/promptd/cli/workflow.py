"""The prompt owner's workflow on the command line: snapshot files, the diff of two renders, the
variable listing, and failures explained with file names and hints.

Entry layer (used by cli/prompt.py): plain formatting and files, no method calls of its own.
"""

from __future__ import annotations

import datetime
import difflib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from promptd.cli import exits
from promptd.cli.exits import Exit, Failed
from promptd.files import Refused, read_named

SNAPSHOT_SUFFIX = ".txt"
# Values longer than this are cut in the text listing of `promptd vars` (--json has them whole).
MAX_SHOWN = 120

Render = tuple[str | None, Mapping[str, Any]]


def size(result: Mapping[str, Any]) -> str:
    return f"{result['template']}, {result['chars']} chars, {len(result['text'].encode('utf-8'))} bytes, sha256 {result['sha256'][:12]}"


def snapshots(folder: Path, renders: Sequence[Render], *, update: bool) -> int:
    """Compares each render with `folder/<context name>.txt` (or writes it with `update`). One
    status line per render on stdout, a unified diff for each change; differences and missing
    snapshots are findings (exit 1); a snapshot that cannot be read or written raises Failed."""
    names = [Path(context).stem for context, _ in renders if context]
    if len(set(names)) != len(names):
        raise Failed("two --context files have the same name; their snapshots would collide")
    findings = 0
    if update:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Failed(f"cannot create {folder}: {exits.os_reason(exc)}") from None
    for context, result in renders:
        path = folder / (Path(context or "default").stem + SNAPSHOT_SUFFIX)
        text = result["text"]
        try:
            old = read_named(path).decode("utf-8") if path.exists() else None
        except Refused as exc:
            raise Failed(exits.cannot_read(str(path), exc.detail, exc.reason)) from None
        except UnicodeDecodeError:
            raise Failed(f"cannot read {path}: not UTF-8 text") from None
        if update:
            status = "same" if old == text else ("written" if old is None else "updated")
            if old != text:
                try:
                    path.write_bytes(text.encode("utf-8"))
                except OSError as exc:
                    raise Failed(f"cannot write {path}: {exits.os_reason(exc)}") from None
        elif old is None:
            status = "missing"
            findings += 1
        elif old == text:
            status = "same"
        else:
            status = "changed"
            findings += 1
        sys.stdout.write(f"{status:8} {path}  ({size(result)})\n")
        if status == "changed" and old is not None:
            sys.stdout.writelines(_unified(old, text, f"{path} (snapshot)", f"{context} (render)"))
    if findings and not update:
        sys.stdout.write(f"{findings} of {len(renders)} snapshots differ or are missing; `--update` writes them\n")
    return Exit.FINDINGS if findings else Exit.OK


def diff(left: Render, right: Render) -> int:
    """A unified diff of two renders; 0 when they are identical, 1 when they differ (as diff(1))."""
    (left_name, left_result), (right_name, right_result) = left, right
    sys.stdout.write(f"--- {left_name}: {size(left_result)}\n+++ {right_name}: {size(right_result)}\n")
    if left_result["text"] == right_result["text"]:
        sys.stdout.write("identical\n")
        return Exit.OK
    lines = list(_unified(left_result["text"], right_result["text"], str(left_name), str(right_name)))
    sys.stdout.writelines(lines[2:])  # the header is the size line above
    return Exit.FINDINGS


def _unified(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    out = []
    for line in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of text\n")
    return out


def variables_text(variables: Sequence[Mapping[str, Any]]) -> str:
    """`name = value   [source]` lines; the namespaces are spread out (`tools.by_kind.read`)."""
    rows: list[tuple[str, Any, str]] = []
    for variable in variables:
        name, value, source = variable["name"], variable["value"], variable["source"]
        if name == "tools":
            by_kind = value.get("by_kind", {})
            rows.extend((f"tools.by_kind.{kind}", tool, source) for kind, tool in by_kind.items())
            if not by_kind:
                rows.append(("tools.by_kind", {}, source))
        elif name == "params":
            rows.extend((f"params.{kind}.{canonical}", client, source) for kind, names in value.items() for canonical, client in names.items())
            if not value:
                rows.append(("params", {}, source))
        else:
            rows.append((name, value, source))
    width = max((len(name) for name, _, _ in rows), default=0)
    lines = []
    for name, value, source in rows:
        shown = orjson.dumps(value).decode()
        if len(shown) > MAX_SHOWN:
            shown = shown[: MAX_SHOWN - 3] + "..."
        lines.append(f"{name.ljust(width)} = {shown}  [{source}]\n")
    return "".join(lines)


def explain(message: str, kind: str, data: Mapping[str, Any], files: Mapping[str, str], raw_context: Mapping[str, Any]) -> str:
    """One line for a failure: `FILE:LINE:COL: cause (kind)` for a template in a file or a context
    or tools file that does not parse, `cannot read FILE: why` for one that cannot be read, the
    field and hints for a context problem, otherwise the message as the wire says it."""
    if data.get("file"):
        # A file read by promptd.prompt.context.read_file_data: its message names it already.
        if "refusal" in data:
            return message if data["refusal"] in exits.PLAIN_REFUSALS else f"{message} ({data['refusal']})"
        return f"{message} ({kind})" if data.get("line") else message
    template = str(data.get("template"))
    if template in files and data.get("line"):
        where = f"{files[template]}:{data['line']}"
        if data.get("column"):
            where += f":{data['column']}"
        return f"{where}: {data.get('cause') or message} ({kind})"
    if template in files:
        return f"{files[template]}: {data.get('cause') or message} ({kind})"
    text = message
    field = data.get("field")
    if field:
        text += f" [field {field}]"
        text += _context_hint(str(field), data, raw_context, files.get("context"))
    elif data.get("errors"):
        text += " [" + "; ".join(f"{e['field']}: {e['message']}" for e in data["errors"]) + "]"
    return f"{text} ({kind})"


def _context_hint(field: str, data: Mapping[str, Any], raw: Mapping[str, Any], context_file: str | None) -> str:
    from promptd.prompt.context import PromptContext
    from promptd.prompt.variables import suggest

    if data.get("reason") == "unknown_field" and "." not in field:
        if "suggestions" in data:
            return ""  # the message already says it
        found = suggest(field, PromptContext.model_fields)
        if found:
            return "; did you mean " + " or ".join(f"`{f}`" for f in found) + "?"
        return ""
    value = raw.get(field.split(".")[0]) if isinstance(raw, Mapping) else None
    if isinstance(value, (datetime.date, datetime.datetime)) and context_file and context_file.lower().endswith((".yaml", ".yml")):
        return f'; YAML read {value.isoformat()} as a date, not text: quote it ({field}: "{value.isoformat()}")'
    if isinstance(value, (bool, int, float)) and data.get("reason") == "string_type" and context_file and context_file.lower().endswith((".yaml", ".yml")):
        return f"; YAML read {value!r} as a {type(value).__name__}: quote it if it is text"
    return ""
