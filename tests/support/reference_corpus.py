"""The differential corpus (tests/reference/corpus/*.yaml) as cases, for the tests that run it
through promptd's engine, the reference set-up and the Rust build of the reference."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from promptd.prompt import TEMPLATES, pipeline
from promptd.prompt.context import parse_context

CORPUS = Path(__file__).resolve().parent.parent / "reference" / "corpus"
# The shipped templates' sources; Apply-Patch from its unsealed copy in the repository.
SHIPPED = {"primary": TEMPLATES / "primary.jinja", "subagent": TEMPLATES / "subagent.jinja", "apply_patch": TEMPLATES / "unsealed" / "apply_patch.jinja"}


@dataclass(frozen=True)
class Case:
    id: str
    template: str
    context: dict[str, Any] = field(default_factory=dict)
    difference: str | None = None  # the id of a documented difference


def cases() -> list[Case]:
    out = []
    for path in sorted(CORPUS.glob("*.yaml")):
        for index, entry in enumerate(yaml.safe_load(path.read_text("utf-8"))):
            case_id = f"{path.stem}-{index:03d}"
            if "shipped" in entry:
                out.append(_shipped(case_id, entry))
            else:
                # Maps in key order, as the pipeline gives every map to a template (variables()).
                out.append(Case(case_id, entry["t"], _key_ordered(entry.get("ctx") or {}), entry.get("diff")))
    return out


def _shipped(case_id: str, entry: dict[str, Any]) -> Case:
    name = entry["shipped"]
    variables = pipeline.variables(parse_context(entry.get("context") or {}), entry.get("tools") or {}, None, entry.get("flags"))
    # Enum members (reminder_style) as the plain text a host's JSON would carry.
    context = {key: str(value) if isinstance(value, str) else value for key, value in variables.items()}
    return Case(f"{case_id}-{name}", SHIPPED[name].read_text("utf-8"), context, entry.get("diff"))


def _key_ordered(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _key_ordered(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_key_ordered(item) for item in value]
    return value
