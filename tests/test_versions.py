"""One version for the repository: the VERSION file, read by pyproject.toml, reported by the
package and the server, and matched by the clients."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import warnings

import pytest
from conftest import ROOT

VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()


def test_the_version_file_holds_one_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:[-.+][0-9A-Za-z.+-]+)?", VERSION), VERSION


def test_pyproject_takes_its_version_from_the_file():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"file": "VERSION"}


def test_setuptools_resolves_pyprojects_version_to_it():
    # The build backend's own reading (setuptools is not in every venv: Python 3.12+ omits it).
    pyprojecttoml = pytest.importorskip("setuptools.config.pyprojecttoml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # older setuptools call this reader "beta"
        resolved = pyprojecttoml.read_configuration(ROOT / "pyproject.toml", expand=True)["project"]["version"]
    # Older setuptools return the file's text with its newline here; a build normalizes it.
    assert resolved.strip() == VERSION


def test_the_package_and_the_cli_report_it():
    from promptd import __version__

    assert __version__ == VERSION
    out = subprocess.run([sys.executable, "-m", "promptd", "version"], capture_output=True, timeout=60).stdout.decode()
    assert out.split()[1] == VERSION


def test_an_installed_package_reads_its_version_from_the_metadata_beside_it(tmp_path):
    from promptd import _installed_version

    info = tmp_path / "promptd-9.8.7.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: promptd\nVersion: 9.8.7rc1\n\nVersion: 0.0.0 (the description)\n", encoding="utf-8")
    assert _installed_version(str(tmp_path)) == "9.8.7rc1"
    # Two installs' metadata side by side: not guessed between, left to importlib.metadata.
    (tmp_path / "promptd-9.8.6.dist-info").mkdir()
    assert _installed_version(str(tmp_path)) is None
    assert _installed_version(str(tmp_path / "missing")) is None


def test_server_info_reports_it(served):
    assert served.call("initialize", {"client_info": {"name": "versions"}})["server_info"]["version"] == VERSION


def test_the_node_client_has_it():
    package = json.loads((ROOT / "clients" / "node" / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == VERSION


def test_the_go_client_has_it_if_it_declares_one():
    # The Go client has no version constant today (a Go module's version is its git tag); one
    # declared later, e.g. `const Version = "…"`, must match too.
    declared = []
    for path in sorted((ROOT / "clients" / "go").rglob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        declared += re.findall(r'\bVersion\s*(?:string\s*)?=\s*"([^"]*)"', path.read_text(encoding="utf-8"))
    assert all(found == VERSION for found in declared), declared
