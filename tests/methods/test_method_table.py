"""The method table imports an area (its models, its domain code) when one of its methods is first
looked up, so a process answers `initialize` without importing what it has not been asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

from promptd.methods import AREAS, TABLE, MethodTable


def run_fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_the_first_answer_imports_no_area_it_was_not_asked_for():
    out = run_fresh(
        "import sys\n"
        "from promptd.local import Local\n"
        "Local({'log_level': 'error'}).call('initialize', {})\n"
        "print(sorted(m for m in sys.modules if m.startswith(('promptd.methods.', 'promptd.api.', 'promptd.citations'))))"
    )
    assert out == "['promptd.api.base', 'promptd.api.core', 'promptd.methods.base', 'promptd.methods.boundary', 'promptd.methods.core']"


def test_looking_a_method_up_imports_its_area_only():
    out = run_fresh(
        "import sys\n"
        "from promptd.methods import TABLE\n"
        "assert 'citation/parse' in TABLE and 'promptd.methods.citations' not in sys.modules\n"
        "TABLE['citation/parse']\n"
        "print('promptd.methods.citations' in sys.modules, 'promptd.methods.provenance' in sys.modules)"
    )
    assert out == "True False"


def test_every_area_defines_exactly_the_methods_the_table_lists():
    for area, names in AREAS.items():
        assert [TABLE[name].name for name in names] == list(names), area
    assert len(dict(TABLE)) == len(TABLE) == len(set(TABLE))


def test_an_area_that_defines_other_methods_than_listed_fails_on_first_use():
    table = MethodTable({"citations": ("citation/parse",)})
    with pytest.raises(RuntimeError, match="citation/describe"):
        table["citation/parse"]


def test_an_unknown_name_is_not_in_the_table():
    assert "no/such" not in TABLE and TABLE.get("no/such") is None
