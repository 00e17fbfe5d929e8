"""promptd: the sidecar that prepares everything a model sees besides the user's own words."""

import os


def _read_version() -> str:
    """The version has one source, the repository's VERSION file (pyproject.toml reads it too).
    Run from a checkout (an editable install, or src/ on the path) the file itself is read, so a
    bump shows at once; an installed wheel has no checkout around it and reads its metadata."""
    package = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(package)
    root = os.path.dirname(src)
    if os.path.basename(src) == "src" and os.path.isfile(os.path.join(root, "pyproject.toml")):
        try:
            with open(os.path.join(root, "VERSION"), encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError:
            pass
    installed = _installed_version(src)
    if installed is not None:
        return installed
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("promptd")
    except PackageNotFoundError:
        return "0+unknown"


def _installed_version(site: str) -> str | None:
    """The `Version:` of the wheel's own metadata beside the package (`promptd-X.dist-info`, the
    layout pip installs), read directly: importlib.metadata searches every entry of sys.path for
    it, several milliseconds of every start (a host waits for them). None when it is not there
    (an egg, a zip), and importlib.metadata answers."""
    try:
        names = [name for name in os.listdir(site) if name.startswith("promptd-") and name.endswith(".dist-info")]
    except OSError:
        return None
    if len(names) != 1:
        return None  # none, or the leftovers of another install: the search decides
    try:
        with open(os.path.join(site, names[0], "METADATA"), encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("Version:"):
                    return line[len("Version:") :].strip() or None
                if not line.strip():
                    break  # the headers end at the first blank line
    except OSError:
        pass
    return None


__version__ = _read_version()
PROTOCOL_VERSION = "2026-11-01"


def __getattr__(name: str) -> object:
    # `promptd.Local` without making `import promptd` pay for pydantic and the method table:
    # the door is imported on first use (PEP 562).
    if name in ("Local", "LocalError"):
        from promptd import local

        return getattr(local, name)
    raise AttributeError(f"module 'promptd' has no attribute {name!r}")
