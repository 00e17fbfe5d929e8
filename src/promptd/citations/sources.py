"""What a host shows for a citation source: kind, label, icon, and how a click opens it.

Domain layer: imports nothing from promptd.rpc or promptd.methods. Source rendering as
docs/citations.md specifies it: the label is the percent-decoded basename of a file:// URL or the
host name of a web URL; the icon goes by file extension with a document fallback for files and a
link icon for the rest; file URLs open natively where the host can, and are copied to the
clipboard where it cannot (a plain browser cannot open file:// programmatically). Any string is
accepted: a URL that cannot be understood is described as `invalid`, never an exception.
"""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import SplitResult, unquote, urlsplit

from promptd.citations.kinds import OpenAction, SourceKind

LINK_ICON = "\U0001f517"  # 🔗 anything that is not a local file
DOCUMENT_ICON = "\U0001f4c4"  # 📄 a file whose extension is not in the table

# Icons for local files by extension (lower case, without the dot). The first five rows are fixed
# (docs/citations.md); the rest are the common families a coding agent cites. Emoji that have a
# text-style default carry U+FE0F so every platform draws them as emoji.
_ICON_ROWS: list[tuple[str, tuple[str, ...]]] = [
    ("\U0001f4dd", ("md", "markdown", "mdx", "rst", "adoc", "org")),  # 📝 prose markup
    ("\U0001f4d5", ("pdf",)),  # 📕
    ("\U0001f40d", ("py", "pyi", "pyw")),  # 🐍
    ("\U0001f4d8", ("ts", "tsx", "mts", "cts")),  # 📘
    ("\U0001f5bc\ufe0f", ("png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "ico", "tif", "tiff", "heic", "avif")),  # 🖼️
    ("\U0001f4dc", ("js", "jsx", "mjs", "cjs")),  # 📜
    ("\U0001f4cb", ("json", "jsonl", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "env", "lock")),  # 📋 data and config
    ("\U0001f4ca", ("csv", "tsv", "xls", "xlsx", "ods", "parquet")),  # 📊 tables
    ("\U0001f4d3", ("ipynb",)),  # 📓 notebooks
    ("\U0001f4c3", ("doc", "docx", "odt", "rtf")),  # 📃 word-processor documents
    ("\U0001f4fd\ufe0f", ("ppt", "pptx", "odp", "key")),  # 📽️ slides
    ("\U0001f980", ("rs",)),  # 🦀
    ("\U0001f41a", ("sh", "bash", "zsh", "fish", "ps1", "bat", "cmd")),  # 🐚 shell scripts
    ("\U0001f310", ("html", "htm", "css", "scss", "sass", "less")),  # 🌐 web pages and styles
    ("\U0001f5c4\ufe0f", ("sql", "db", "sqlite", "sqlite3")),  # 🗄️ databases
    (
        "\U0001f4bb",
        ("c", "h", "cc", "cpp", "cxx", "hpp", "go", "java", "kt", "kts", "rb", "php", "swift", "cs", "scala", "lua", "zig", "dart", "r", "jl", "ex", "exs", "hs", "ml", "vue", "svelte"),
    ),  # 💻 other source code
    ("\U0001f3b5", ("mp3", "wav", "flac", "ogg", "m4a", "aac")),  # 🎵
    ("\U0001f3ac", ("mp4", "mov", "mkv", "webm", "avi")),  # 🎬
    ("\U0001f4e6", ("zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "rar", "whl", "jar")),  # 📦 archives
    ("\U0001f511", ("pem", "crt", "cer", "pub")),  # 🔑 keys and certificates
    ("\U0001f4c4", ("txt", "log", "text")),  # 📄 plain text, same as the fallback
]
ICONS_BY_EXTENSION: dict[str, str] = {ext: icon for icon, exts in _ICON_ROWS for ext in exts}
# Well-known files without an extension.
ICONS_BY_NAME: dict[str, str] = {
    "dockerfile": "\U0001f433",  # 🐳
    "makefile": "\u2699\ufe0f",  # ⚙️
}


# C0/C1 controls and the bidi embedding, override, isolate and mark characters.
_UNSHOWABLE = {cp: "\ufffd" for cp in [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]}


class Description(NamedTuple):
    kind: SourceKind
    label: str
    icon: str
    open: OpenAction
    # The decoded local path of a file URL (what the clipboard receives); None otherwise.
    path: str | None = None


def describe(url: str, native_open: bool = True) -> Description:
    """Describes a source URL; `native_open` says whether the host can open local files itself."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # e.g. an unbalanced IPv6 bracket in the host
        return _invalid()
    scheme = parts.scheme.lower()
    if scheme == "file":
        return _describe_file(parts.netloc, parts.path, native_open)
    if scheme and len(scheme) > 1:
        return _describe_web(parts)
    # No scheme, or a one-letter "scheme" that is really a Windows drive (C:\...): not a URL.
    return _invalid()


def icon_for_name(name: str) -> str:
    lowered = name.lower()
    if lowered in ICONS_BY_NAME:
        return ICONS_BY_NAME[lowered]
    # The text after the last dot; for a dotfile that is its name (`.env` -> env), which is the
    # icon a reader expects for it.
    dot = lowered.rfind(".")
    extension = lowered[dot + 1 :] if dot >= 0 else ""
    return ICONS_BY_EXTENSION.get(extension, DOCUMENT_ICON)


def _describe_file(host: str, raw_path: str, native_open: bool) -> Description:
    # Windows URLs come as file:///C:/dir/name, and models also write backslashes; both are
    # separators for the label. Decoding happens per segment, so an encoded %2F stays in the name.
    segments = [s for s in raw_path.replace("\\", "/").split("/") if s]
    decoded = [unquote(s, errors="replace") for s in segments]
    label = _displayable(decoded[-1]) if decoded else ""
    if not label:
        label = "/"
    path = "/".join(decoded)
    if decoded and _is_drive(decoded[0]):
        path = path if len(decoded) > 1 else path + "/"
    else:
        path = "/" + path
    if host and host.lower() != "localhost":
        path = "//" + unquote(host, errors="replace") + path  # a UNC share: \\server\share\...
    icon = DOCUMENT_ICON if label == "/" or _is_drive(label) else icon_for_name(label)
    action = OpenAction.NATIVE if native_open else OpenAction.CLIPBOARD
    return Description(SourceKind.FILE, label, icon, action, path)


def _describe_web(parts: SplitResult) -> Description:
    try:
        host = parts.hostname or ""
    except ValueError:
        host = ""
    if not host:
        return _invalid()
    # A web source's label is its host name (docs/citations.md); a leading www. adds nothing a
    # reader needs.
    if host.startswith("www.") and len(host) > 4:
        host = host[4:]
    return Description(SourceKind.WEB, _displayable(host), LINK_ICON, OpenAction.BROWSER)


def _displayable(name: str) -> str:
    """A decoded name made safe to show: percent escapes can smuggle in line breaks and bidi
    controls (`photo%E2%80%AEgpj.exe` would display as `photoexe.jpg`), so those become U+FFFD."""
    return name.translate(_UNSHOWABLE)


def _is_drive(segment: str) -> bool:
    return len(segment) == 2 and segment[1] == ":" and segment[0].isascii() and segment[0].isalpha()


def _invalid() -> Description:
    # Nothing to open: copying the text is the one action that is always safe.
    return Description(SourceKind.INVALID, "", LINK_ICON, OpenAction.CLIPBOARD)
