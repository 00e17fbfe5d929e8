"""The files the command line reads, under the named-file rule (symlinks followed, but regular
files only, never on a kernel filesystem, bounded) and the vault key file under the safe-read rule
(never through a symlink): a refusal is one line on stderr and the usual exit status, never a
traceback, a hang or a MemoryError. Run in-process through promptd.cli.main."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from promptd.cli import main as cli
from promptd.errors import VaultLocked
from promptd.prompt import vault

GOOD = "${%- if tools.by_kind.read %}Read with ${{ tools.by_kind.read }}.${%- endif %}\n"
EXIT_FINDINGS, EXIT_USAGE = 1, 2


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    """No vault key or config of the developer's own, warnings-only logs."""
    for name in [n for n in os.environ if n.startswith("PROMPTD_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PROMPTD_LOG_LEVEL", "warning")


def main(capsys, *argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of one command, run in a thread so that a read that blocks
    fails the test instead of hanging it."""
    outcome: list[Any] = []
    worker = threading.Thread(target=lambda: outcome.append(cli.main(list(argv))), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), f"promptd {' '.join(argv)} blocked"
    captured = capsys.readouterr()
    return outcome[0], captured.out, captured.err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe.jinja"
    os.mkfifo(path)
    return path


@pytest.fixture
def key(tmp_path) -> Path:
    path = tmp_path / "keys" / "vault.key"
    path.parent.mkdir()
    path.write_text(vault.new_key().hex() + "\n")
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("flag", ["--override", "--body"])
@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_a_custom_template_or_body_on_a_device_or_a_fifo_is_an_input_error_not_a_memory_error_or_a_hang(capsys, fifo, flag, target):
    path = str(fifo) if target == "fifo" else target
    code, out, err = main(capsys, "render", flag, f"custom:{path}" if flag == "--override" else path)
    assert code == EXIT_USAGE and out == ""
    assert one_line(err).endswith("(not_regular)")


def test_a_context_or_tools_file_on_dev_zero_is_an_input_error(capsys):
    # As every other file the commands read: the rule it broke, in the words of the others.
    code, _, err = main(capsys, "render", "--context", "/dev/zero")
    assert code == EXIT_USAGE and one_line(err) == "promptd render: cannot read /dev/zero: not a regular file (not_regular)"
    code, _, err = main(capsys, "vars", "--tools", "/dev/zero")
    assert code == EXIT_USAGE and one_line(err).startswith("promptd vars: ") and one_line(err).endswith("(not_regular)")


@pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/environ"), reason="needs procfs")
def test_a_kernel_file_named_as_a_body_is_refused(capsys):
    code, out, err = main(capsys, "render", "--body", "/proc/self/environ")
    assert code == EXIT_USAGE and out == "" and one_line(err).endswith("(special_filesystem)")


def test_lint_reports_a_fifo_and_dev_zero_with_their_reasons_and_lints_the_rest(capsys, fifo, tmp_path):
    good = tmp_path / "good.jinja"
    good.write_text(GOOD)
    code, out, _ = main(capsys, "lint", "--json", str(fifo), "/dev/zero", str(good))
    report = json.loads(out)
    assert code == EXIT_USAGE and report["findings"] == []
    assert [(e["file"], e["error"]) for e in report["errors"]] == [(str(fifo), "not_regular"), ("/dev/zero", "not_regular")]


def test_a_template_the_user_names_through_a_symlink_is_read(capsys, tmp_path):
    (tmp_path / "v3.jinja").write_text(GOOD)
    (tmp_path / "current.jinja").symlink_to("v3.jinja")
    code, _, err = main(capsys, "lint", str(tmp_path / "current.jinja"))
    assert code == 0, err


def test_lint_still_reads_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    code, _, err = main(capsys, "lint", "-")
    assert code == 0, err


def test_vault_seal_of_a_fifo_or_dev_zero_is_an_input_error_and_writes_nothing(capsys, fifo, key, tmp_path):
    out = tmp_path / "out.sealed"
    for plain in (str(fifo), "/dev/zero"):
        code, _, err = main(capsys, "vault", "seal", plain, "-o", str(out), "--key-file", str(key))
        assert code == EXIT_USAGE and one_line(err).endswith("(not_regular)") and not out.exists()


def test_a_symlinked_key_file_is_refused_and_nothing_is_sealed(capsys, key, tmp_path):
    plain = tmp_path / "good.jinja"
    plain.write_text(GOOD)
    out = tmp_path / "out.sealed"
    link = tmp_path / "link.key"
    link.symlink_to(key)
    linked_folder = tmp_path / "linked"
    linked_folder.symlink_to(key.parent)
    for key_file in (link, linked_folder / "vault.key"):
        code, _, err = main(capsys, "vault", "seal", str(plain), "-o", str(out), "--key-file", str(key_file))
        # A key the vault cannot use is a vault error, as a key file others can read is.
        assert code == EXIT_FINDINGS and one_line(err).endswith("(vault_locked)") and not out.exists()
    code, _, err = main(capsys, "vault", "seal", str(plain), "-o", str(out), "--key-file", str(key))
    assert code == 0 and out.exists(), err


def test_a_key_file_through_a_symlink_a_fifo_or_a_device_is_refused_with_its_reason(key, tmp_path):
    link = tmp_path / "link.key"
    link.symlink_to(key)
    fifo = tmp_path / "fifo.key"
    os.mkfifo(fifo)
    for path, refusal in ((link, "symlink"), (tmp_path / "linked" / "vault.key", "symlink"), (fifo, "not_regular"), (Path("/dev/zero"), "not_regular")):
        if path.parent.name == "linked" and not path.parent.exists():
            path.parent.symlink_to(key.parent)
        with pytest.raises(VaultLocked) as caught:
            vault.read_key_file(path)
        assert (caught.value.data["reason"], caught.value.data["refusal"]) == ("key_file_unsafe", refusal)
    assert vault.read_key_file(key) == bytes.fromhex(key.read_text().strip())


def test_a_sealed_template_on_a_fifo_is_refused_without_blocking(fifo):
    sealed = vault.Vault(path=fifo, key=vault.DEFAULT_KEY)
    with pytest.raises(VaultLocked) as caught:
        sealed.read()
    assert (caught.value.data["reason"], caught.value.data["refusal"]) == ("unsafe_file", "not_regular")


def test_vault_open_of_dev_zero_is_a_vault_error_not_a_memory_error(capsys):
    code, out, err = main(capsys, "vault", "open", "/dev/zero")
    assert code == EXIT_FINDINGS and out == "" and one_line(err).endswith("(vault_locked)")


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_a_config_file_or_a_params_file_on_a_device_or_a_fifo_is_an_input_error(capsys, fifo, target):
    path = str(fifo) if target == "fifo" else target
    code, _, err = main(capsys, "--config", path, "keys")
    assert code == EXIT_USAGE and "(not_regular)" in one_line(err)
    code, _, err = main(capsys, "call", "reminder/wrap", f"@{path}")
    assert code == EXIT_USAGE and "(not_regular)" in one_line(err)


def test_serve_with_a_symlinked_key_file_exits_2_with_one_line(key, tmp_path):
    link = tmp_path / "link.key"
    link.symlink_to(key)
    result = run_cli("serve", env={"PROMPTD_VAULT__KEY_FILE": str(link)}, stdin=b"")
    assert result.returncode == EXIT_USAGE
    one_line(result.stderr.decode())
