"""The prompt context (docs/templates.md): the versioned, serializable inputs of one system prompt.

Domain layer: pure data and validation. Must not import promptd.rpc or promptd.methods, and must
not import jinja2 or cryptography (this module is loaded at server start-up through the API models).

Every problem with a context is an InvalidContext error naming the field, so a typo in a context
file can never silently change a prompt; `version` is what forward compatibility goes through.
"""

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError, field_validator

from promptd import files
from promptd.errors import InvalidContext
from promptd.prompt.kinds import Audience, Override, PromptMode

# The context structure versions this build understands. A newer structure may add fields whose
# meaning we cannot guess, so it is refused rather than rendered half-understood.
SUPPORTED_VERSIONS = frozenset({1})
CURRENT_VERSION = 1
# The default `system_prompt_label`: the label inserted at the beginning of the prompt.
DEFAULT_LABEL = "Grok"


class CustomOverride(BaseModel):
    """`{"custom": "..."}`: a caller-provided base template."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    custom: StrictStr


class SealedOverride(BaseModel):
    """`{"sealed": "<id>"}`: a base template kept sealed in the vault under that id (config
    `vault.templates`); opened only while it renders."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sealed: StrictStr = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")


class AgentsMdFile(BaseModel):
    """One project instruction file (AGENTS.md and the like) the host discovered, in precedence
    order. Carried and persisted with the context; the host delivers it as a reminder, not in the
    system prompt (docs/templates.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file_name: StrictStr
    file_path: StrictStr
    content: StrictStr


# A string with no space and no punctuation beyond - and _ (docs/template-compatibility.md).
_LONE_WORD = re.compile(r"[A-Za-z_-]*")


def _lowered(value: Any) -> Any:
    # Enum values may arrive capitalized ("Extend", "Primary", "Codex"), as the modes and overrides
    # are named in prose; the wire is snake_case. Both spellings mean the same thing, so both are
    # accepted and stored lowercase.
    return value.lower() if isinstance(value, str) else value


class PromptContext(BaseModel):
    """The prompt context's structure, with its defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)

    version: StrictInt = Field(CURRENT_VERSION, description="Structure version; only 1 is supported.")
    prompt_mode: PromptMode = Field(PromptMode.EXTEND, description="extend: base template then body; full: the body alone.")
    audience: Audience = Field(Audience.PRIMARY, description="primary: the main agent; subagent: a delegated worker.")
    memory_enabled: StrictBool = False
    system_prompt_label: StrictStr = DEFAULT_LABEL
    os_name: StrictStr | None = None
    shell_path: StrictStr | None = None
    working_directory: StrictStr | None = None
    current_date: StrictStr | None = None
    is_non_interactive: StrictBool = Field(False, description="true for SDKs, pipelines and other unattended use.")
    include_browser_verification: StrictBool = Field(False, description="The default of the flag of the same name (a request's flags still win), kept with the context as in the reference pipeline.")
    role_instructions: StrictStr | None = Field(None, description="The agent's role: rendered for both audiences (a subagent's role is its own).")
    persona_instructions: StrictStr | None = Field(None, description="The agent's persona: rendered for both audiences.")
    role_summaries: list[StrictStr] = Field(default=[], description="Kept for primary; cleared by prompt/persist for subagent.")
    persona_summaries: list[StrictStr] = Field(default=[], description="Kept for primary; cleared by prompt/persist for subagent.")
    memory_global_path: StrictStr | None = Field(None, description="Where the user's global memory lives (a template variable).")
    memory_workspace_path: StrictStr | None = Field(None, description="Where this workspace's memory lives (a template variable).")
    agents_md_files: list[AgentsMdFile] = Field(default=[], description="Project instruction files in precedence order; carried, not rendered into the prompt.")
    build_timestamp_utc: StrictStr | None = Field(None, description="When the host built this context (ISO 8601, UTC); carried, not rendered.")
    prompt_body: StrictStr | None = Field(None, description="The custom body: appended in extend mode, the whole prompt in full mode.")
    system_prompt: Literal[Override.NONE, Override.CODEX] | CustomOverride | SealedOverride = Field(
        Override.NONE,
        description='Base template override: "none", "codex" (the sealed Apply-Patch template), {"custom": "..."}, '
        '{"sealed": "<id>"} (a template sealed in the vault), or a legacy plain template string (read as {"custom": ...}).',
    )

    @field_validator("prompt_mode", "audience", mode="before")
    @classmethod
    def _lower_enums(cls, value: Any) -> Any:
        return _lowered(value)

    @field_validator("system_prompt", mode="before")
    @classmethod
    def _override_shape(cls, value: Any) -> Any:
        if isinstance(value, str):
            lowered = value.lower()
            if lowered in tuple(Override):
                return lowered
            # A lone word is a misspelled keyword ("codec", "None "), not a one-word prompt: taking
            # it as a template would silently replace the whole system prompt.
            if _LONE_WORD.fullmatch(value.strip()):
                raise ValueError('must be "none", "codex", {"custom": "<template>"}, {"sealed": "<id>"} or a template text')
            # The legacy form: system_prompt was once the template text itself. The reference
            # pipeline still reads any other string as a custom template, and so does promptd.
            return CustomOverride(custom=value)
        if isinstance(value, Mapping):
            # Validated here so an error names `system_prompt.custom`, not a union branch.
            if "sealed" in value:
                return SealedOverride.model_validate(dict(value))
            return CustomOverride.model_validate(dict(value))
        return value

    @property
    def body(self) -> str | None:
        """The custom body, or None when it is missing or blank (a blank body adds nothing)."""
        if self.prompt_body is None or not self.prompt_body.strip():
            return None
        return self.prompt_body


def parse_context(data: Any) -> PromptContext:
    """Validates raw data (a JSON object) into a PromptContext; raises InvalidContext naming the
    first offending field."""
    if isinstance(data, PromptContext):
        return data
    if not isinstance(data, Mapping):
        raise InvalidContext("the prompt context must be an object", field="context")
    version = data.get("version", CURRENT_VERSION)
    # Checked before everything else: an unknown version explains every other surprise.
    if isinstance(version, bool) or not isinstance(version, int) or version not in SUPPORTED_VERSIONS:
        raise InvalidContext(
            f"unsupported prompt context version {version!r}; supported: {sorted(SUPPORTED_VERSIONS)}",
            field="version",
            supported=sorted(SUPPORTED_VERSIONS),
        )
    try:
        return PromptContext.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
        field = _field_name(first["loc"])
        if first["type"] == "extra_forbidden":
            raise InvalidContext(f"unknown prompt context field {field!r}", field=field, reason="unknown_field") from None
        raise InvalidContext(f"invalid prompt context field {field!r}: {first['msg']}", field=field, reason=first["type"]) from None


_UNION_TAGS = frozenset({"CustomOverride", "SealedOverride"})


def _field_name(loc: tuple[Any, ...]) -> str:
    # pydantic puts union branch tags ("literal['none','codex']", "CustomOverride") into the
    # location; a caller wants the path of the field they wrote.
    parts = [str(p) for p in loc if isinstance(p, int) or str(p).isidentifier() and str(p) not in _UNION_TAGS]
    return ".".join(parts) or "context"


def for_persistence(context: PromptContext) -> PromptContext:
    """The context as it should be stored: enums lowercase, every default explicit once dumped, and
    role and persona summaries cleared for a subagent (the catalog of other agents is for the
    agent that delegates, as in the reference pipeline)."""
    if context.audience is Audience.SUBAGENT and (context.role_summaries or context.persona_summaries):
        return context.model_copy(update={"role_summaries": [], "persona_summaries": []})
    return context


def read_file_data(path: str | Path) -> Any:
    """The raw data of a JSON or YAML context file (by extension; otherwise JSON is tried first).
    A file that cannot be read or parsed is an InvalidContext naming it (`file`), with `refusal`
    (the named-file rule's reason) or the `line` and `column` the parser points at, counted from 1."""
    path = Path(path)
    try:
        # The named-file rule (docs/security.md, "Safe reads"): a FIFO or /dev/zero named as a
        # context can neither hang the command nor exhaust its memory.
        text = files.read_named(path).decode("utf-8")
    except files.Refused as exc:
        raise InvalidContext(f"cannot read {path}: {exc.detail}", field="context", file=str(path), refusal=exc.reason.value) from None
    except UnicodeDecodeError:
        raise InvalidContext(f"cannot read {path}: not UTF-8 text", field="context", file=str(path)) from None
    suffix = path.suffix.lower()
    if suffix == ".json":
        return _json(text, path)
    if suffix in (".yaml", ".yml"):
        return _yaml(text, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return _yaml(text, path)


def _json(text: str, path: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # `FILE:LINE:COL: message`, as a compiler says it (json counts both from 1).
        problem = exc.msg[:1].lower() + exc.msg[1:]
        raise InvalidContext(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {problem}", field="context", file=str(path), line=exc.lineno, column=exc.colno) from None


def _yaml(text: str, path: Path) -> Any:
    import yaml  # lazily: only the CLI reads YAML contexts

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        # PyYAML's marks count from 0; an error without one (rare) names the file alone.
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None)
        suffix = f": {problem}" if problem else ""
        if mark is None:
            raise InvalidContext(f"{path}: not valid YAML{suffix}", field="context", file=str(path)) from None
        line, column = mark.line + 1, mark.column + 1
        raise InvalidContext(f"{path}:{line}:{column}: not valid YAML{suffix}", field="context", file=str(path), line=line, column=column) from None
