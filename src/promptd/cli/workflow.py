"""The prompt owner's workflow on the command line: snapshot files, the diff of two renders, the
variable listing, and failures explained with file names and hints.

Entry layer (used by cli/prompt.py): plain formatting and files, no method calls of its own.
"""

from __future__ import annotations

import datetime
import difflib
import errno
import os
import secrets
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from promptd import exactjson, files
from promptd.cli import exits
from promptd.cli.exits import Exit, Failed
from promptd.files import Refusal, Refused

SNAPSHOT_SUFFIX = ".txt"
# Values longer than this are cut in the text listing of `promptd vars` (--json has them whole).
MAX_SHOWN = 120

Render = tuple[str | None, Mapping[str, Any]]


def size(result: Mapping[str, Any]) -> str:
    return f"{result['template']}, {result['chars']} chars, {len(result['text'].encode('utf-8', 'surrogatepass'))} bytes, sha256 {result['sha256'][:12]}"


def snapshots(folder: Path, renders: Sequence[Render], *, update: bool, failed: Sequence[str | None] = ()) -> int:
    """Compares each render with `folder/<context name>.txt` (or writes it with `update`). One
    status line per render on stdout, a unified diff for each change, and a `failed` line for
    each context in `failed` (one that did not render; its error is the caller's to report);
    differences and missing snapshots are findings (exit 1); a snapshot that cannot be read or
    written raises Failed.

    A snapshot's name comes from a context file's name, and the folder is often a checkout: a
    snapshot that is a symlink (`ctx.txt -> ../victim/precious.txt`), a FIFO or a device is
    refused, never followed, read or written through (`read_snapshot`, `write_snapshot`). The
    folder itself is the one the person named, its own links theirs."""
    names = [Path(context).stem for context, _ in renders if context] + [Path(context).stem for context in failed if context]
    if len(set(names)) != len(names):
        raise Failed("two --context files have the same name; their snapshots would collide")
    findings = 0
    if update:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Failed(f"cannot create {folder}: {exits.os_reason(exc)}") from None
    try:
        folder_fd: int | None = os.open(folder, files.ROOT_FLAGS)
    except FileNotFoundError:
        folder_fd = None  # no folder yet: every snapshot is missing
    except OSError as exc:
        raise Failed(f"cannot open {folder}: {exits.os_reason(exc)}") from None
    try:
        for context, result in renders:
            filename = Path(context or "default").stem + SNAPSHOT_SUFFIX
            path = folder / filename
            text = result["text"]
            try:
                old = read_snapshot(folder_fd, filename)
            except (Refused, UnicodeDecodeError) as exc:
                raise Failed(f"cannot read snapshot {path}: {_refusal(exc)}") from None
            if update:
                assert folder_fd is not None  # made above
                status = "same" if old == text else ("written" if old is None else "updated")
                if old != text:
                    try:
                        write_snapshot(folder_fd, filename, text.encode("utf-8", "surrogatepass"))
                    except Refused as exc:
                        raise Failed(f"cannot write snapshot {path}: {_refusal(exc)}") from None
                    except OSError as exc:
                        raise Failed(f"cannot write snapshot {path}: {exits.os_reason(exc)}") from None
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
    finally:
        if folder_fd is not None:
            os.close(folder_fd)
    for context in failed:
        sys.stdout.write(f"{'failed':8} {folder / (Path(context or 'default').stem + SNAPSHOT_SUFFIX)}  (the context did not render; the error is on stderr)\n")
    total = len(renders) + len(failed)
    if findings and not update:
        sys.stdout.write(f"{findings} of {total} snapshots differ or are missing; `--update` writes them\n")
    if failed:
        sys.stdout.write(f"{len(failed)} of {total} contexts did not render; their snapshots were left as they were\n")
    return Exit.FINDINGS if findings else Exit.OK


def read_snapshot(folder_fd: int | None, filename: str) -> str | None:
    """The snapshot `filename` in the folder open as `folder_fd`, None when there is none. Read
    without following a link: lstat, open O_NOFOLLOW | O_NONBLOCK relative to the folder, fstat
    (the same inode, a regular file, not on a kernel filesystem), at most 16 MiB. No owner or
    permission rule: a colleague's snapshot, or one a checkout left group-writable, is read as
    any named file is. Raises Refused (a symlink, FIFO, device, folder; too large) or
    UnicodeDecodeError."""
    if folder_fd is None:
        return None
    try:
        before = os.lstat(filename, dir_fd=folder_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        raise Refused(Refusal.UNREADABLE) from None
    _check_entry(before)
    try:
        fd = os.open(filename, files.FILE_FLAGS, dir_fd=folder_fd)
    except FileNotFoundError:
        return None  # removed since the lstat
    except OSError as exc:
        raise Refused(Refusal.SYMLINK if exc.errno in (errno.ELOOP, errno.EMLINK) else Refusal.UNREADABLE) from None
    try:
        after = os.fstat(fd)
        files.check_same(before, after)
        if files.on_kernel_filesystem(fd, after):
            raise Refused(Refusal.SPECIAL_FILESYSTEM)
        # surrogatepass: a snapshot holds a lone surrogate of its context as it was written.
        return files.read_fd(files.Opened(fd, after), files.MAX_NAMED_BYTES).decode("utf-8", "surrogatepass")
    finally:
        os.close(fd)


def write_snapshot(folder_fd: int, filename: str, data: bytes) -> None:
    """Writes `data` as the snapshot `filename` without following a link: to a new file in the
    folder (O_CREAT | O_EXCL | O_NOFOLLOW), renamed over the old entry, which must be a regular
    file or absent. A rename replaces the entry itself, so even a link swapped in after the check
    is replaced, never written through. The old snapshot's permission bits are kept. Raises
    Refused or OSError."""
    try:
        old: os.stat_result | None = os.lstat(filename, dir_fd=folder_fd)
    except FileNotFoundError:
        old = None
    if old is not None:
        _check_entry(old)
    temporary = f".{filename}.{secrets.token_hex(6)}.tmp"
    # A new snapshot is 0666 less the umask, as any file the command writes; a replaced one keeps
    # its bits (set below, once the file is ours alone to change).
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666 if old is None else 0o600, dir_fd=folder_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
        finally:
            os.close(fd)
        os.rename(temporary, filename, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder_fd)
        except OSError:
            pass
        raise


def _refusal(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, Refused) and exc.reason in (Refusal.SYMLINK, Refusal.NOT_REGULAR, Refusal.DIRECTORY, Refusal.REPLACED):
        return f"{exc}; a snapshot must be a regular file, and is never read or written through a link: remove it, then `--update` writes it"
    return str(exc)


def _check_entry(st: os.stat_result) -> None:
    """A snapshot's entry is a regular file: never a link (followed, it would show or overwrite
    whatever it points at), a folder, a FIFO or a device."""
    if stat.S_ISLNK(st.st_mode):
        raise Refused(Refusal.SYMLINK)
    if stat.S_ISDIR(st.st_mode):
        raise Refused(Refusal.DIRECTORY)
    if not stat.S_ISREG(st.st_mode):
        raise Refused(Refusal.NOT_REGULAR)


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


def template_diff(old_name: str, new_name: str, contexts: Sequence[str | None], old: Mapping[str | None, Mapping[str, Any]], new: Mapping[str | None, Mapping[str, Any]]) -> int:
    """Two versions of a template over the same contexts: for each context a header, then the
    unified diff of its two renders (`identical` when they agree; `failed` when either did not
    render), then a summary line. 1 when any context's prompts differ, else 0."""
    differ = same = failed = 0
    for context in contexts:
        label = context or "all defaults"
        sys.stdout.write(f"=== {label}\n")
        if context not in old or context not in new:
            failed += 1
            sys.stdout.write("failed (the error is on stderr)\n")
            continue
        if diff((f"{old_name} ({label})", old[context]), (f"{new_name} ({label})", new[context])) == Exit.OK:
            same += 1
        else:
            differ += 1
    parts = [f"{differ} differ", f"{same} identical"] + ([f"{failed} failed"] if failed else [])
    sys.stdout.write(f"{old_name} -> {new_name} over {len(contexts)} context{'s' if len(contexts) != 1 else ''}: {', '.join(parts)}\n")
    return Exit.FINDINGS if differ else Exit.OK


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
        shown = exactjson.dumps(value).decode()
        if len(shown) > MAX_SHOWN:
            shown = shown[: MAX_SHOWN - 3] + "..."
        lines.append(f"{name.ljust(width)} = {shown}  [{source}]\n")
    return "".join(lines)


def reads_text(reads: Sequence[Mapping[str, Any]]) -> str:
    """`template  path` lines for what the templates read, `(not defined)` after a path this
    render does not define."""
    if not reads:
        return ""
    width = max(len(r["template"]) for r in reads)
    lines = ["\nread by the templates:\n"]
    lines.extend(f"{r['template'].ljust(width)}  {r['path']}{'' if r['defined'] else '  (not defined)'}\n" for r in reads)
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
        located = _in_context_file(str(field), raw_context, files.get("context"))
        if located:
            return f"{located}: {text} ({kind})"
    elif data.get("errors"):
        text += " [" + "; ".join(f"{e['field']}: {e['message']}" for e in data["errors"]) + "]"
    return f"{text} ({kind})"


def _in_context_file(field: str, raw: Mapping[str, Any], context_file: str | None) -> str | None:
    """`FILE:LINE` of a bad field when it is one the context file holds (not one a flag such as
    --body or --tool put there), `FILE` when its line cannot be told; None otherwise."""
    top = field.split(".")[0]
    if not context_file or not isinstance(raw, Mapping) or top not in raw:
        return None
    line = field_line(context_file, field)
    return f"{context_file}:{line}" if line else context_file


def field_line(path: str, field: str) -> int | None:
    """The 1-based line of `field` (`role_summaries.0`, `system_prompt.custom`) in a JSON or YAML
    file: the line of its key, or of its item in a list; the deepest part of the path found.
    Read with YAML's composer, which keeps positions and reads JSON too. Error paths only."""
    import yaml

    try:
        node = yaml.compose(files.read_named(path).decode("utf-8"))
    except (Refused, UnicodeDecodeError, yaml.YAMLError):
        return None
    line = None
    for part in field.split("."):
        if isinstance(node, yaml.MappingNode):
            entry = next(((key, value) for key, value in node.value if isinstance(key, yaml.ScalarNode) and key.value == part), None)
            if entry is None:
                break
            line, node = entry[0].start_mark.line + 1, entry[1]
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
            line = node.start_mark.line + 1
        else:
            break
    return line


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
