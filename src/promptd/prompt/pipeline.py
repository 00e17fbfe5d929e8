"""The system prompt pipeline (docs/templates.md): what a render of a context prints, and with
what: the variables a template sees, the template chosen by mode, override and audience, and the
stable prefix two renders share.

Domain layer: must not import promptd.rpc or promptd.methods; imported lazily (the engine uses
jinja2). Plain functions over the context; renderer.py runs the templates they choose.

Extend mode renders the base template, then the custom body, joined by one blank line. The base is
chosen by the override first (custom > sealed > codex's Apply-Patch > none) and by the audience
last; a base with a sealed file configured (vault.templates) is opened from the vault. Full mode
renders the body alone.
"""

from __future__ import annotations

import functools
import ntpath
import threading
from collections.abc import Collection, Mapping
from typing import Any

from promptd.errors import InvalidContext
from promptd.prompt import TEMPLATES
from promptd.prompt.context import CustomOverride, PromptContext, SealedOverride
from promptd.prompt.engine import engine
from promptd.prompt.kinds import Audience, PromptMode
from promptd.reminders.kinds import BlockStyle
from promptd.text import shared_prefix_length

# Extend mode, as in the reference implementation: base and body are concatenated with one blank line.
BODY_SEPARATOR = "\n\n"
SHIPPED = {"primary": "primary.jinja", "subagent": "subagent.jinja"}
# Shells that chain commands with `;` rather than `&&` (Windows PowerShell 5.1 and cmd.exe).
SEMICOLON_SHELLS = frozenset({"powershell", "powershell.exe", "cmd", "cmd.exe"})
WINDOWS_NATIVE_SHELLS = SEMICOLON_SHELLS | {"pwsh", "pwsh.exe"}
# The wrapper styles the runtime writes reminders in (config `reminders.style`); the shipped
# templates describe the one in use, so the model knows what a genuine block looks like.
REMINDER_STYLES = frozenset(BlockStyle)
DEFAULT_REMINDER_STYLE = BlockStyle.PUA


_sources: dict[str, str] = {}
_sources_lock = threading.Lock()


def shipped_source(name: str) -> str:
    """The text of a shipped (unsealed) template, read once. The same str object is returned every
    time, so the compile cache finds it by identity."""
    with _sources_lock:
        if name not in _sources:
            _sources[name] = (TEMPLATES / SHIPPED[name]).read_text("utf-8")
        return _sources[name]


def default_flags(context: PromptContext) -> dict[str, bool]:
    """Flags a caller does not set, derived from the context the way the reference implementation
    derives them from the host (docs/templates.md lists them)."""
    os_name = (context.os_name or "").strip().lower()
    shell = ntpath.basename(context.shell_path or "").strip().lower()  # handles / and \ alike
    is_windows = os_name.startswith("win")
    return {
        "is_windows": is_windows,
        "shell_uses_semicolon": shell in SEMICOLON_SHELLS,
        # Windows without a Unix-like shell (or with an unknown one) has no grep, sed or find.
        "has_unix_utilities": not (is_windows and (not shell or shell in WINDOWS_NATIVE_SHELLS)),
        # promptd delivers system reminders; a host that does not can say so.
        "system_reminders_enabled": True,
        "include_browser_verification": context.include_browser_verification,
    }


def variables(
    context: PromptContext,
    tools: Mapping[str, str],
    params: Mapping[str, Mapping[str, str]] | None = None,
    flags: Mapping[str, bool] | None = None,
    *,
    reminder_style: BlockStyle = DEFAULT_REMINDER_STYLE,
) -> dict[str, Any]:
    """What a template sees: the `tools` and `params` namespaces, then the context's environment and
    identity fields at the top level, then what the runtime fills in (`reminder_style`), then the
    flags. A flag may not reuse any of those names, so a caller cannot spoof a runtime value.

    Tools and params are ordered by kind (and params by name), whatever order the host sent them
    in: a loop over `tools.by_kind` then gives the same prompt, and the same cacheable prefix, for
    the same tool set, as in the reference pipeline, whose maps iterate in key order."""
    if reminder_style not in REMINDER_STYLES:
        raise ValueError(f"reminder_style must be one of {sorted(REMINDER_STYLES)}, not {reminder_style!r}")
    primary = context.audience is Audience.PRIMARY
    merged: dict[str, Any] = {
        "tools": {"by_kind": dict(sorted(tools.items()))},
        "params": {kind: dict(sorted(names.items())) for kind, names in sorted((params or {}).items())},
        "system_prompt_label": context.system_prompt_label,
        "os_name": context.os_name or "",
        "shell_path": context.shell_path or "",
        "working_directory": context.working_directory or "",
        "current_date": context.current_date or "",
        "memory_enabled": context.memory_enabled,
        "is_non_interactive": context.is_non_interactive,
        "memory_global_path": context.memory_global_path or "",
        "memory_workspace_path": context.memory_workspace_path or "",
        "audience": context.audience.value,
        # Audience (docs/templates.md): role and persona instructions are the agent's own identity,
        # so both audiences get them (a subagent's role is what it was spawned as); the summaries
        # are the catalog of agents to delegate to, for the primary audience only.
        "role_instructions": context.role_instructions or "",
        "persona_instructions": context.persona_instructions or "",
        "role_summaries": list(context.role_summaries) if primary else [],
        "persona_summaries": list(context.persona_summaries) if primary else [],
        # From the runtime's configuration, never from the request. Only the style: the nonce
        # never enters the system prompt (byte-stable across turns; trust stays in the suffix).
        "reminder_style": reminder_style,
    }
    given = dict(flags or {})
    for name in given:
        if name in merged:
            raise InvalidContext(f"flag {name!r} would hide the template variable of the same name", field=f"flags.{name}", reason="name_clash")
    merged.update(default_flags(context))
    merged.update(given)
    return merged


def base_template(context: PromptContext) -> str:
    """The name of the base template extend mode starts from (a sealed override's is `custom`:
    its id is the caller's own)."""
    override = context.system_prompt
    if isinstance(override, (CustomOverride, SealedOverride)):
        return "custom"
    if override == "codex":
        return "apply_patch"
    return context.audience.value


def vault_id(context: PromptContext) -> str:
    """The template id the vault is asked for: the sealed override's id, else the base's name."""
    override = context.system_prompt
    return override.sealed if isinstance(override, SealedOverride) else base_template(context)


def runs_others_templates(context: PromptContext, sealed_slots: Collection[str] = ()) -> bool:
    """True when the render runs a template promptd did not ship as text: the caller's own (a
    custom override, a body: in a worker) or a sealed one (in-process, under a deadline). Such a
    render may take its whole CPU deadline, so a server bounds how many run at once."""
    if context.body is not None or isinstance(context.system_prompt, (CustomOverride, SealedOverride)):
        return True
    if context.prompt_mode is PromptMode.FULL:
        return False  # no body: refused before anything renders
    name = base_template(context)
    return name == "apply_patch" or name in sealed_slots


def renders_inline(context: PromptContext, sealed_slots: Collection[str] = (), *, strict: bool = True) -> bool:
    """True when the render needs only an already-compiled shipped template: cheap and bounded, so
    a server may run it without handing it to a worker thread."""
    if context.prompt_mode is not PromptMode.EXTEND or context.body is not None:
        return False
    name = base_template(context)
    # A sealed replacement of a shipped template may be configured: that render needs the vault.
    return name in SHIPPED and not sealed_slots and engine().is_cached(shipped_source(name), strict=strict)


def template_sources(context: PromptContext) -> tuple[list[tuple[str, str]], bool]:
    """The (name, text) of each template a render of `context` prints, and whether that is all
    of them (a sealed template's text stays in its vault)."""
    sources: list[tuple[str, str]] = []
    complete = True
    if context.prompt_mode is PromptMode.EXTEND:
        override = context.system_prompt
        if isinstance(override, CustomOverride):
            sources.append(("custom", override.custom))
        elif (name := base_template(context)) in SHIPPED:
            sources.append((name, shipped_source(name)))
        else:
            complete = False
    if context.body is not None:
        sources.append(("body", context.body))
    return sources, complete


@functools.lru_cache(maxsize=64)
def names_read(source: str) -> frozenset[str]:
    """The top-level names `source` reads (nothing when it does not parse: the render will say
    why). Remembered: the same templates come every turn."""
    from jinja2 import TemplateSyntaxError, meta

    from promptd.prompt.engine import normalize

    try:
        return frozenset(meta.find_undeclared_variables(engine().environment.parse(normalize(source))))
    except TemplateSyntaxError:
        return frozenset()


def probe(value: str) -> str:
    """A value of the same length that differs from `value` at every character (so equal lengths
    and truthiness keep the template on the same branches)."""
    return "".join(chr(ord(char) ^ 1) if not 0xD800 <= (ord(char) ^ 1) <= 0xDFFF else "?" for char in value)


def stable_prefix(text: str, other: str) -> int:
    """The length of what `text` and `other` share from the start, cut back to a line start: a
    host sends that part as the cached block of its system prompt."""
    shared = shared_prefix_length(text, other)
    if shared == len(text):
        return shared
    return text.rfind("\n", 0, shared) + 1
