"""The shape of every command's help: the formatter, hand-wrapped paragraphs, and the `exit
status:` block that states what each code means for that command.

Entry layer, used by cli/parser.py and cli/prompt.py (which registers its commands with the parser
and so cannot import it back): argparse is imported here, so never on the plain `serve` path.
"""

from __future__ import annotations

import argparse
import textwrap

from promptd.cli.exits import Exit

# Help texts are wrapped by hand (the formatter keeps them as written, for the tables): at this
# width they read in an 80-column terminal with the two-space indent of a table row.
WIDTH = 78

PIPE_NOTE = "A reader that closes stdout early (`promptd ... | head`) ends the command quietly with 1."


def formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=30)


def exit_status(*rows: tuple[Exit, str], pipe: bool = True) -> str:
    """The `exit status:` block of one command's help: what each code means for this command,
    one row a code (as `promptd serve --help` always had), and the closed-pipe note for a
    command that writes to stdout. tests/cli/test_cli_conventions.py runs a case for every row."""
    lines = ["exit status:"]
    for code, text in rows:
        lines.extend(textwrap.wrap(text, WIDTH, initial_indent=f"  {int(code)}  ", subsequent_indent="     "))
    if pipe:
        lines.extend(textwrap.wrap(PIPE_NOTE, WIDTH))
    return "\n".join(lines)


def epilog(*parts: str) -> str:
    return "\n\n".join(part for part in parts if part)


def wrap(text: str) -> str:
    """A description as paragraphs wrapped to WIDTH (blank lines between them kept)."""
    return "\n\n".join(textwrap.fill(" ".join(paragraph.split()), WIDTH) for paragraph in text.split("\n\n"))
