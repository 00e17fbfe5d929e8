"""citation/describe in-process: labels, icons and open actions for file and web URLs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptd.citations.sources import DOCUMENT_ICON, LINK_ICON, OpenAction, SourceKind, describe, icon_for_name


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("file:///D:/workspace/suzent/README.md", "README.md"),
        ("file:///home/me/My%20Notes.md", "My Notes.md"),
        ("file:///home/me/%E4%B8%AD%E6%96%87%E3%83%A1%E3%83%A2.txt", "中文メモ.txt"),
        ("file:///home/me/\u4e2d\u6587.pdf", "中文.pdf"),
        ("file:///C:/Users/kim/100%25%20done.md", "100% done.md"),
        ("file:///C:\\Users\\kim\\report.pdf", "report.pdf"),
        ("file:///c:/dir/sub/", "sub"),
        ("file://localhost/etc/hosts", "hosts"),
        ("file://server/share/plan.docx", "plan.docx"),
        ("file:///srv/app.py#L10", "app.py"),
        ("FILE:///srv/App.PY", "App.PY"),
        ("file:///C:/", "C:"),
        ("file:///", "/"),
    ],
)
def test_a_file_url_is_labelled_with_its_decoded_basename(url, label):
    described = describe(url)
    assert described.kind is SourceKind.FILE
    assert described.label == label


def test_a_file_url_gives_its_decoded_local_path():
    assert describe("file:///D:/work/My%20Doc.md").path == "D:/work/My Doc.md"
    assert describe("file:///home/me/a%20b.py").path == "/home/me/a b.py"
    assert describe("file://server/share/x.md").path == "//server/share/x.md"


def test_controls_and_bidi_overrides_in_a_decoded_name_are_not_shown():
    described = describe("file:///x/photo%E2%80%AEgpj.exe")
    assert "\u202e" not in described.label
    assert described.label.endswith(".exe")
    assert "\n" not in describe("file:///x/a%0Ab.md").label


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("https://www.bbc.co.uk/news", "bbc.co.uk"),
        ("http://example.com", "example.com"),
        ("HTTPS://WWW.Example.COM:8080/a?b#c", "example.com"),
        ("https://user:secret@docs.python.org/3/", "docs.python.org"),
        ("https://www./x", "www."),
        ("https://wwwx.org", "wwwx.org"),
    ],
)
def test_a_web_url_is_labelled_with_its_host_without_www(url, label):
    described = describe(url)
    assert (described.kind, described.label, described.icon, described.open) == (SourceKind.WEB, label, LINK_ICON, OpenAction.BROWSER)
    assert described.path is None


@pytest.mark.parametrize("url", ["", "   ", "not a url", "C:\\dir\\file.md", "/home/me/x.md", "http://[::1", "http:///path", "mailto:someone", "://x"])
def test_a_bad_url_gives_an_empty_label_and_the_link_icon(url):
    described = describe(url)
    assert (described.kind, described.label, described.icon) == (SourceKind.INVALID, "", LINK_ICON)


def test_file_urls_open_natively_only_where_the_host_can():
    assert describe("file:///a/b.md").open is OpenAction.NATIVE
    assert describe("file:///a/b.md", native_open=False).open is OpenAction.CLIPBOARD
    assert describe("https://a.org", native_open=False).open is OpenAction.BROWSER


@pytest.mark.parametrize(
    ("name", "icon"),
    [
        ("README.md", "\U0001f4dd"),
        ("paper.pdf", "\U0001f4d5"),
        ("main.py", "\U0001f40d"),
        ("app.ts", "\U0001f4d8"),
        ("App.TSX", "\U0001f4d8"),
        ("photo.JPEG", "\U0001f5bc\ufe0f"),
        ("diagram.svg", "\U0001f5bc\ufe0f"),
        ("index.js", "\U0001f4dc"),
        ("config.yaml", "\U0001f4cb"),
        ("data.csv", "\U0001f4ca"),
        ("lib.rs", "\U0001f980"),
        ("run.sh", "\U0001f41a"),
        ("backup.tar.gz", "\U0001f4e6"),
        ("Dockerfile", "\U0001f433"),
        ("notes.txt", DOCUMENT_ICON),
        ("mystery.qqq", DOCUMENT_ICON),
        ("noextension", DOCUMENT_ICON),
        (".env", "\U0001f4cb"),
        (".bashrc", DOCUMENT_ICON),
    ],
)
def test_file_icons_follow_the_extension_table(name, icon):
    assert icon_for_name(name) == icon
    assert describe(f"file:///w/{name}").icon == icon


def test_web_urls_get_the_link_icon_whatever_their_path():
    assert describe("https://arxiv.org/paper.pdf").icon == LINK_ICON


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), st.text(max_size=40).map(lambda s: "file:///" + s), st.text(max_size=40).map(lambda s: "https://" + s)))
def test_describe_never_raises(url):
    described = describe(url)
    assert described.icon
    assert described.kind in set(SourceKind)


def test_the_icon_table_in_the_docs_matches_the_code():
    from pathlib import Path

    from promptd.citations.sources import ICONS_BY_EXTENSION

    doc = (Path(__file__).resolve().parents[2] / "docs" / "citations.md").read_text("utf-8")
    table = doc.split("| icon | extensions |", 1)[1].split("\n\n", 1)[0]
    documented = {}
    for row in table.splitlines()[2:]:
        icon, extensions = (cell.strip() for cell in row.strip("|").split("|"))
        for ext in extensions.split(","):
            documented[ext.strip().strip("`").lstrip(".")] = icon
    assert documented == ICONS_BY_EXTENSION
