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
