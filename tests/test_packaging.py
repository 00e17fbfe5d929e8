"""The distributions stand alone: SPDX license metadata, Project-URLs, docs in the sdist, no test
suite shipped in part, a README whose links work outside the repository, and a build with no
warnings (setuptools announced that the old license table stops building in February 2027)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from conftest import ROOT

REPO = "https://github.com/promptd/promptd/"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    out = tmp_path_factory.mktemp("dist")
    # The environment's own setuptools (a test extra), no isolated download: the build that runs
    # here is the one pyproject.toml asks for.
    # PYTHONDONTWRITEBYTECODE (set by some CI images) only makes setuptools say it skips byte-compiling.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(out), str(ROOT)], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel, done.stdout + done.stderr


def test_the_build_prints_no_warning(built):
    log = built[2]
    # A vector file is named python_only_method_is_a_warning.json: lines that copy files are not messages.
    messages = [line for line in log.splitlines() if not line.startswith(("copying ", "adding "))]
    assert not [line for line in messages if re.search(r"warning|deprecat", line, re.I)]


def test_the_wheel_declares_an_spdx_license_its_urls_and_classifiers(built):
    with zipfile.ZipFile(built[1]) as wheel:
        (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(wheel.read(name).decode("utf-8"))
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in wheel.namelist())
    assert metadata["License-Expression"] == "Apache-2.0"
    urls = dict(value.split(", ", 1) for value in metadata.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert all(url.startswith(REPO.rstrip("/")) for url in urls.values())
    assert "Typing :: Typed" in metadata.get_all("Classifier")


def test_the_sdist_holds_the_docs_and_the_protocol_and_no_partial_test_suite(built):
    with tarfile.open(built[0]) as sdist:
        names = {"/".join(n.split("/")[1:]) for n in sdist.getnames()}
    docs = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert docs <= names and "protocol/openrpc.json" in names and "LICENSE" in names
    assert not [n for n in names if n.startswith("tests/")]


def test_the_help_texts_and_the_package_name_the_same_documentation_address():
    from promptd.cli.parser import DOCS_URL

    with open(ROOT / "pyproject.toml", "rb") as handle:
        urls = tomllib.load(handle)["project"]["urls"]
    assert urls["Documentation"] == DOCS_URL


def test_the_readme_links_work_outside_the_repository_and_name_files_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert targets and all(re.match(r"^(https?:|#)", t) for t in targets), [t for t in targets if not re.match(r"^(https?:|#)", t)]
    own = [t.removeprefix(REPO + "blob/main/").removeprefix(REPO + "tree/main/") for t in targets if t.startswith(REPO)]
    missing = [t for t in own if not (ROOT / t.partition("#")[0]).exists()]
    assert own and missing == []
