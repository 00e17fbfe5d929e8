"""Configuration: defaults < promptd.toml (--config) < PROMPTD_* environment < initialize config.

Domain-neutral: each section is a small pydantic model; unknown fields are errors in a config file
and in `initialize`, so a typo there can never silently change behaviour. The environment is the
exception: it is shared with the host, which may have `PROMPTD_*` variables of its own
(`PROMPTD_BIN`, `PROMPTD_HOME`), so a `PROMPTD_*` name that is not a setting is ignored and
reported by `ignored_env_names` (the CLI logs the names once, never the values). A setting's
invalid value is still an error.
"""

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, create_model

from promptd.childenv import REFUSED_PREFIX, VAULT_KEY_ENV
from promptd.errors import ConfigError
from promptd.files import Refused, read_named
from promptd.logs import LogLevel
from promptd.prompt.kinds import VaultKeySource
from promptd.reminders.kinds import BlockStyle, Eviction

# Every variable promptd reads starts with the prefix no child process is given.
ENV_PREFIX = REFUSED_PREFIX
CONFIG_ENV = f"{ENV_PREFIX}CONFIG"
# PROMPTD_* variables promptd reads that are not configuration fields (never reported as ignored).
NON_CONFIG_ENV = {VAULT_KEY_ENV, CONFIG_ENV}


class Section(BaseModel):
    # Built on first validation, not at import: a start with no config file and no PROMPTD_*
    # settings takes the defaults without validating (see load), so it never builds them.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class KeyEntry(Section):
    key: str
    purpose: str
    introduced_in: str = "host"


class KeysConfig(Section):
    # Reject keys that are neither reserved nor added by the host.
    strict: bool = False
    extra: list[KeyEntry] = []


class RemindersConfig(Section):
    # The runtime provenance rules (docs/security.md): PUA delimiters by default, XML on request.
    style: BlockStyle = BlockStyle.PUA
    # The assembled-body budget (docs/reminders.md, assembly rule 5).
    budget_chars: int = Field(6000, ge=1)
    # Two seconds per provider (docs/reminders.md, assembly rule 2).
    provider_timeout_ms: int = Field(2000, ge=1, le=600_000)
    # The host's provenance key (docs/security.md, "A key for restarts"): a 0600 file holding a
    # 256-bit key. Blocks written by one process then verify in every later process that has the
    # same key (a resumed session, a sidecar per job); without it each process draws its own.
    provenance_key_file: str | None = None
    # Older keys that still verify but never sign (rotation): the files of keys used before.
    provenance_previous_key_files: list[str] = []
    # The ledger of system prompts this process rendered (docs/security.md), which history/
    # sanitize gives back unchanged. Reminder blocks verify themselves and are not kept here.
    ledger_max_entries: int = Field(65_536, ge=1)
    ledger_eviction: Eviction = Eviction.OLDEST
    spill_dir: str | None = None
    spill_retention_hours: float = Field(24, gt=0)
    spill_max_file_bytes: int = Field(1 << 20, ge=1)
    spill_max_session_bytes: int = Field(16 << 20, ge=1)
    spill_max_total_bytes: int = Field(256 << 20, ge=1)
    session_metadata: bool = True
    project_memory: bool = True
    project_memory_max_chars: int = Field(20_000, ge=1)
    file_modified: bool = True
    providers: list[dict[str, Any]] = []


class TodoGateConfig(Section):
    enabled: bool = False
    max_fires_per_prompt: int = Field(2, ge=0)


class TodoNudgeConfig(Section):
    enabled: bool = True
    turns_since_todo_write: int = Field(3, ge=1)
    turns_between_reminders: int = Field(5, ge=1)


class SessionsConfig(Section):
    idle_timeout_s: float = Field(3600, gt=0)
    max_sessions: int = Field(1024, ge=1)
    # Byte caps on what a host may keep in a session (docs/operations.md, "Session limits"): with
    # the defaults, 1,024 sessions hold at most 256 MiB, however large the host's lines are.
    # A session id is a name or a UUID; 256 bytes fits any id scheme.
    max_id_bytes: int = Field(256, ge=1)
    # One value: cwd, date, os_name, shell, one env name or value, one tool name, one modified
    # file's path. 16 KiB is four times Linux's PATH_MAX.
    max_field_bytes: int = Field(16 << 10, ge=1)
    # All the host's facts of one session together (env, tools and modified files included).
    max_session_bytes: int = Field(256 << 10, ge=1)


class PromptConfig(Section):
    # Tool kinds exempt from the guard rule (docs/templates.md). None by default: an unguarded
    # `tools.by_kind.search` renders as an empty name when the host has no search tool.
    exempt_kinds: list[str] = []
    # Strict undefined for prompt/render (docs/templates.md, "Strict undefined"): a name no render
    # defines is an error instead of empty text. A request's `strict_undefined` wins.
    strict_undefined: bool = True
    # Start a render worker at `initialize`, so the first custom render or lint (an editor host's
    # first keystrokes) does not wait for a worker's start (about 0.1-1 s on a loaded machine).
    # Off by default: a host that renders only the shipped templates never needs one.
    warm_worker: bool = False
    # Variables whose value changes from day to day or folder to folder: what a prompt renders
    # from them is left out of prompt/render's `stable_prefix_chars` (docs/templates.md, "Prompt
    # caching"). A prompt owner adds any of their own that change per session or per day.
    volatile_variables: list[str] = ["current_date", "working_directory"]
    # CPU time a caller's template (custom or body) may take to compile and render, and the lint
    # to check one; the render is then stopped (docs/templates.md). Real prompts take a few ms; a
    # 10,000-line template about 200 ms to compile. 50 ms at least: less would refuse real
    # templates on a loaded machine. 60 s at most: at most two renders run at once, so a longer
    # one would hold a worker, and up to its memory budget, for minutes while the others wait;
    # and what the sandbox does not count (the overhead of many small values a loop keeps) grows
    # with the time a loop may run, so a longer deadline leaves more of it to the memory limit.
    render_timeout_ms: int = Field(2000, ge=50, le=60_000)
    # Memory a render worker may take for one job on top of what it uses once started (its
    # address-space limit; docs/templates.md). The sandbox's own bounds let a render build at most
    # 32 Mi characters (128 MiB at Python's 4 bytes a character); 512 MiB leaves room for Python's
    # per-object overhead on top, while two workers at most stay near 1 GiB in all. 64 MiB at
    # least: less than that fails ordinary renders of large templates.
    render_memory_mb: int = Field(512, ge=64, le=65_536)


class VaultConfig(Section):
    # Where the vault key comes from (docs/templates.md, "Keys"): auto = PROMPTD_VAULT_KEY, else
    # key_file, else the shipped key (refused once templates of your own are configured); env,
    # key_file and shipped each require that one source. Checked at start-up.
    key_source: VaultKeySource = VaultKeySource.AUTO
    # A file holding the vault key (64 hex digits, base64, or 32 raw bytes); refused unless only
    # its owner can read it. PROMPTD_VAULT_KEY, when set, wins over it (key_source auto).
    key_file: str | None = None
    # A sealed Apply-Patch template to use instead of the shipped one (`promptd vault seal`).
    template_file: str | None = None
    # Sealed templates by id: primary and subagent replace the shipped ones, apply_patch the
    # shipped Apply-Patch template, any other id is rendered with system_prompt {"sealed": id}.
    templates: dict[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,64}$")], str] = {}

    @property
    def has_own_templates(self) -> bool:
        """Sealed templates of one's own are configured (else only the shipped Apply-Patch one is
        sealed, and a render of Primary or Subagent never needs the vault)."""
        return bool(self.templates or self.template_file)


class Config(Section):
    # 16 MiB: large enough for a whole file's contents in one tool result, small enough that a
    # runaway writer cannot exhaust memory.
    max_message_bytes: int = Field(16 << 20, ge=1024)
    # The bytes of the lines of the requests running at once past which promptd stops reading
    # more until some finish (docs/operations.md, "Limits"). Queued requests hold their params in
    # full, so a count of 1024 alone would let 16 GiB in. 64 MiB: four lines of the largest size
    # (a line of any allowed size is still read: reading pauses once the bound is passed).
    max_in_flight_bytes: int = Field(64 << 20, ge=1024)
    log_level: LogLevel = LogLevel.INFO
    # How long SIGTERM and end of input wait for in-flight requests before cancelling them.
    shutdown_deadline_ms: int = Field(5000, ge=0)
    reminders: RemindersConfig = Field(default_factory=RemindersConfig)
    keys: KeysConfig = Field(default_factory=KeysConfig)
    todo_gate: TodoGateConfig = Field(default_factory=TodoGateConfig)
    todo_nudge: TodoNudgeConfig = Field(default_factory=TodoNudgeConfig)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
    prompt: PromptConfig = Field(default_factory=PromptConfig)
    vault: VaultConfig = Field(default_factory=VaultConfig)

    def merged(self, overrides: Mapping[str, Any]) -> "Config":
        """A new config with `overrides` deep-merged on top; raises ConfigError."""
        return _validate(overrides, self)


def load(path: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    environ = os.environ if environ is None else environ
    data: dict[str, Any] = {}
    path = path or environ.get(CONFIG_ENV)
    if path:
        import tomllib  # only when there is a file to read

        try:
            # The named-file rule (docs/security.md, "Safe reads"): symlinks followed, but a
            # FIFO or a device never hangs or floods the start.
            raw = read_named(path)
        except Refused as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}", refusal=exc.reason.value) from None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: not UTF-8 text") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    data = _deep_merge(data, _from_env(environ))
    return _validate(data, defaults())


def defaults(model: type[Section] = Config) -> Any:
    """The defaults of `model` and its sections, unvalidated: they are valid by definition, and
    building the validators is a measurable part of promptd's start. Equal to `model()`."""
    sections = {}
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, Section):
            sections[name] = defaults(field.annotation)
    return model.model_construct(_fields_set=set(), **sections)


def ignored_env_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The `PROMPTD_*` names in `environ` that are neither settings nor promptd's own variables
    (PROMPTD_CONFIG, PROMPTD_VAULT_KEY), sorted. `load` skips them."""
    environ = os.environ if environ is None else environ
    return sorted(name for name in environ if name.startswith(ENV_PREFIX) and name not in NON_CONFIG_ENV and _setting_path(name) is None)


def _setting_path(name: str) -> list[str] | None:
    """PROMPTD_TODO_GATE__ENABLED -> ["todo_gate", "enabled"]; None when the name does not name a
    setting: every part but the last must be a section, the last a field of it. A section itself
    (PROMPTD_REMINDERS='{"style": "xml"}') is a setting too."""
    path = name[len(ENV_PREFIX) :].lower().split("__")
    model: type[BaseModel] | None = Config
    for part in path:
        if model is None or part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        model = annotation if isinstance(annotation, type) and issubclass(annotation, Section) else None
    return path


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """PROMPTD_TODO_GATE__ENABLED=true -> {"todo_gate": {"enabled": True}}; values are JSON when
    they parse as JSON, text otherwise. Names that are not settings are skipped."""
    out: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name in NON_CONFIG_ENV:
            continue
        path = _setting_path(name)
        if path is None:
            continue
        try:
            value: Any = orjson.loads(raw)
        except orjson.JSONDecodeError:
            value = raw
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"environment variable {name} conflicts with another")
        node[path[-1]] = value
    return out


def _deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _validate(data: Mapping[str, Any], base: Config) -> Config:
    """`data` deep-merged over `base`, validated part by part: each section `data` names is
    validated whole (its fields from `base` under the given ones), the top-level settings it names
    through a model of those settings alone, and every other section is `base`'s, valid already.
    The same result and errors as validating the whole merged config, without building the
    validators of the sections nobody set: a measurable part of a host's wait at start-up."""
    changes: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    sections = _section_models()
    for name, value in data.items():
        model = sections.get(name)
        if model is None:
            scalars[name] = value
            continue
        if isinstance(value, Mapping):
            value = _deep_merge(getattr(base, name).model_dump(), dict(value))
        changes[name] = _checked(model, value, (name,))
    if scalars:
        given = _checked(_top_level_model(), scalars, ())
        changes.update({name: getattr(given, name) for name in scalars})
    return base.model_copy(update=changes) if changes else base


def _checked(model: type[Section], value: Any, where: tuple[str, ...]) -> Any:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        parts = [str(p) for p in (*where, *first["loc"])]
        path = ".".join(parts) or "config"
        if first["type"] == "extra_forbidden":
            # A misspelled setting (`[remnders]`, `initialize`'s `remnders`): the ones it was
            # probably meant to be, found only now, on the error path.
            found = [".".join([*parts[:-1], name]) for name in _suggest(parts[-1], _settings_beside(parts))]
            hint = f"; did you mean {' or '.join(f'`{name}`' for name in found)}?" if found else ""
            raise ConfigError(f"invalid config at {path}: unknown setting{hint}", field=path, suggestions=found) from exc
        raise ConfigError(f"invalid config at {path}: {first['msg']}", field=path) from exc


def _settings_beside(parts: list[str]) -> list[str]:
    """The setting names in the section that holds the path `parts` (Config's own for a top-level
    name): what a misspelled last part may have meant."""
    model: type[BaseModel] = Config
    for part in parts[:-1]:
        annotation = model.model_fields[part].annotation if part in model.model_fields else None
        if not (isinstance(annotation, type) and issubclass(annotation, Section)):
            return []
        model = annotation
    return list(model.model_fields)


def _suggest(name: str, candidates: list[str]) -> list[str]:
    from promptd.text import suggest  # difflib, on an error path only

    return suggest(name, candidates)


def env_suggestions(names: list[str]) -> dict[str, list[str]]:
    """For ignored PROMPTD_* names that look like a misspelled setting, the settings' variable
    names they were probably meant to be (PROMPTD_REMNDERS__BUDGET_CHARS ->
    [PROMPTD_REMINDERS__BUDGET_CHARS]); names close to none (PROMPTD_BIN) are left out. Compared
    without the prefix, which every candidate shares."""
    settings = [path.lower() for path in _env_setting_paths(Config)]
    found = {}
    for name in names:
        meant = _suggest(name[len(ENV_PREFIX) :].lower(), settings)
        if meant:
            found[name] = [ENV_PREFIX + path.upper() for path in meant]
    return found


def _env_setting_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    """`max_message_bytes`, `reminders`, `reminders__budget_chars`...: every setting as the part of
    its variable's name after PROMPTD_ (lower case)."""
    paths = []
    for name, field in model.model_fields.items():
        paths.append(prefix + name)
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, Section):
            paths.extend(_env_setting_paths(annotation, f"{prefix}{name}__"))
    return paths


@cache
def _section_models() -> dict[str, type[Section]]:
    return {name: field.annotation for name, field in Config.model_fields.items() if isinstance(field.annotation, type) and issubclass(field.annotation, Section)}


@cache
def _top_level_model() -> type[Section]:
    """Config's own settings (not its sections), with their declarations: validates `log_level`
    and the like without building every section's validator. Unknown names are refused by it."""
    fields: dict[str, Any] = {name: (field.annotation, field) for name, field in Config.model_fields.items() if name not in _section_models()}
    model: type[Section] = create_model("Config", __base__=Section, **fields)
    return model
