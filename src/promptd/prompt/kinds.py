"""The system prompt vocabularies shared by the context, the pipeline and the wire models.

Vocabulary layer: imports nothing but `enum`, so the API models use them without importing the
template engine. An enum's docstring would become its schema's description in
protocol/openrpc.json; these explain themselves in comments.
"""

from enum import StrEnum


# extend: the base template, then the body; full: the body alone.
class PromptMode(StrEnum):
    EXTEND = "extend"
    FULL = "full"


# primary: the main agent; subagent: a delegated worker.
class Audience(StrEnum):
    PRIMARY = "primary"
    SUBAGENT = "subagent"


# The named base-template overrides of `system_prompt` (the third form is {"custom": "..."}).
class Override(StrEnum):
    NONE = "none"
    CODEX = "codex"  # the sealed Apply-Patch template


# The base template a render used, or `full` when the body alone was rendered.
class TemplateName(StrEnum):
    PRIMARY = "primary"
    SUBAGENT = "subagent"
    APPLY_PATCH = "apply_patch"
    CUSTOM = "custom"
    FULL = "full"


# Where a variable a template sees comes from (prompt/vars).
class VariableSource(StrEnum):
    TOOLS = "tools"  # the tools namespace (request, else initialize)
    PARAMS = "params"  # the params namespace (request)
    CONTEXT = "context"  # a prompt context field, as given or its default
    DERIVED = "derived"  # computed from the context (audience rules, ...)
    RUNTIME = "runtime"  # from the runtime's configuration (reminder_style)
    FLAG = "flag"  # a flag the request set
    DEFAULT_FLAG = "default_flag"  # a flag the request did not set, derived from the context


# Where the vault key comes from (config `vault.key_source`).
class VaultKeySource(StrEnum):
    AUTO = "auto"  # PROMPTD_VAULT_KEY, else vault.key_file, else the shipped key (unless templates are configured)
    ENV = "env"
    KEY_FILE = "key_file"
    SHIPPED = "shipped"
