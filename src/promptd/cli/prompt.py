"""CLI commands of the prompt pipeline: render, lint, vault.

Entry layer (registered by cli/parser.py). `promptd render` and `promptd lint` build the params of
`prompt/render` and `prompt/lint` from files and flags, then run those methods through the
in-process door (promptd.local.Local), which is the server's method table and boundary: one
validation, one handler, one error shape, so a context or template behaves identically from the
CLI and over the wire. `promptd vault` has no method; it calls the vault module directly.
jinja2 and cryptography are imported only when one of these commands runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from promptd import exactjson, files
from promptd.cli import exits
from promptd.cli.exits import Exit, Failed

OVERRIDES = ("none", "codex")
# Flag values are as strict as context booleans: true or false, nothing that merely looks like one.
TRUE_WORDS = frozenset({"true"})
FALSE_WORDS = frozenset({"false"})

# What exits 2 for every command that renders (render, diff) or reads render inputs (vars).
INPUT_ERRORS = "usage or input error: bad arguments, a file that cannot be read or is not valid (context, --body, --tools, --override custom:FILE), an unknown --flag, an invalid configuration"
RENDER_ERRORS = INPUT_ERRORS + ", a template error (syntax, an undefined name, the compile or render limits), a sealed template the vault key cannot open"
KEY_HELP = "key file (default: config vault.key_source: PROMPTD_VAULT_KEY, then vault.key_file, then the shipped key)"


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Registers the prompt subcommands; each sets `handler(config, args) -> exit code`."""
    from promptd.cli.helptext import exit_status, formatter, wrap

    render = commands.add_parser(
        "render",
        help="render a system prompt from a context file",
        description=wrap(
            "Render the system prompt for a prompt context (docs/templates.md) and print exactly its text. With --snapshot DIR, render each --context and compare it with DIR/<context name>.txt."
        ),
        epilog=exit_status(
            (Exit.OK, "rendered; with --snapshot, every render is the same as its snapshot (with --update: written)"),
            (Exit.FINDINGS, "with --snapshot, a render differs from its snapshot or has none"),
            (Exit.USAGE, RENDER_ERRORS + ", an output that cannot be written; with --snapshot, a context that does not render (every other one is still compared or written)"),
        ),
        formatter_class=formatter,
    )
    _render_inputs(render, contexts=True)
    render.add_argument("--json", action="store_true", help="print the whole result (text, template, sha256, chars, bytes) as JSON")
    render.add_argument("-o", "--output", help="write the text to this file instead of stdout")
    render.add_argument("--snapshot", metavar="DIR", help="compare each render with DIR/<context name>.txt; differences are findings")
    render.add_argument("--update", action="store_true", help="with --snapshot: write the renders into DIR instead of comparing")
    render.set_defaults(handler=run_render)

    diff = commands.add_parser(
        "diff",
        help="show how the prompts of two contexts, or of two template versions, differ",
        description=wrap(
            "Render two contexts with the same options and print a unified diff of the two prompts. "
            "With --template, LEFT and RIGHT are two versions of a custom template (OLD NEW): both are "
            "rendered over each --context (default: one context, all defaults), with a unified diff per "
            "context and a summary."
        ),
        epilog=exit_status(
            (Exit.OK, "the prompts are identical (with --template: for every context)"),
            (Exit.FINDINGS, "the prompts differ (as diff(1)); with --template, for at least one context"),
            (Exit.USAGE, RENDER_ERRORS + "; with --template, a context or a version that does not render (every other context is still compared)"),
        ),
        formatter_class=formatter,
    )
    diff.add_argument("left", metavar="LEFT", help="context file (JSON or YAML); with --template, the old template")
    diff.add_argument("right", metavar="RIGHT", help="context file (JSON or YAML); with --template, the new template")
    diff.add_argument("--template", action="store_true", help="LEFT and RIGHT are two versions of a custom template, compared over each --context")
    diff.add_argument("--context", action="append", default=[], help="with --template: a context file to render both versions with (repeatable; default: all defaults)")
    _render_inputs(diff, contexts=False)
    diff.set_defaults(handler=run_diff)

    variables = commands.add_parser(
        "vars",
        help="list every variable a template sees, with its value, and what the templates read",
        description=wrap(
            "Every variable a template rendered from these inputs sees (context fields, derived values, "
            "runtime values, tools, params, flags), with its value and where it came from; then what the "
            "render's templates read (names and attribute paths, such as tools.by_kind.read), marking those "
            "these inputs do not define. Nothing is rendered: a template's own errors are `promptd render`'s "
            "and `promptd lint`'s to find."
        ),
        epilog=exit_status((Exit.OK, "the variables were listed"), (Exit.USAGE, INPUT_ERRORS)),
        formatter_class=formatter,
    )
    _render_inputs(variables, contexts=False, single_context=True)
    variables.add_argument("--json", action="store_true", help="print the prompt/vars result as JSON")
    variables.set_defaults(handler=run_vars)

    lint = commands.add_parser(
        "lint",
        help="check templates: guards, undefined names, syntax, portability, cache stability",
        description=wrap(
            'Lint templates (docs/templates.md, "Lint"): every ${{ tools.by_kind.X }} inside a guard, params.X.Y '
            "inside a condition on params.X, every name one a render defines, filters and tests that exist, and "
            "syntax. Every file is linted, whatever the others hold. FILE - reads stdin."
        ),
        epilog=exit_status(
            (Exit.OK, "no findings but warnings (not_portable and cache_volatile warnings alone exit 0)"),
            (Exit.FINDINGS, "findings: an unguarded tool, an undefined name, an unknown filter or test, a value with no printed form, a syntax error"),
            (
                Exit.USAGE,
                "usage or input error: bad arguments, a file that cannot be read or is not UTF-8 text, a sealed "
                "file, a template the lint cannot finish within the render limits, an invalid configuration",
            ),
        ),
        formatter_class=formatter,
    )
    lint.add_argument("files", nargs="+", metavar="FILE")
    lint.add_argument("--exempt", action="append", metavar="KIND", help="a tool kind exempt from the guard rule (repeatable; default from config)")
    lint.add_argument("--strict", action="store_true", help="exempt no kind at all")
    _add_declarations(lint)
    lint.add_argument("--no-strict-undefined", dest="strict_undefined", action="store_false", help="do not check names against the variables")
    lint.add_argument("--json", action="store_true", help='print {"findings": [...], "errors": [...]} as JSON')
    lint.set_defaults(handler=run_lint)

    vault = commands.add_parser(
        "vault",
        help="make a key; seal, verify or open a template with it",
        description=wrap(
            'Sealed templates (docs/templates.md, "The vault"): a template encrypted and authenticated with '
            "the vault key (AES-256-GCM), opened only while it renders. `promptd help vault SUBCOMMAND` "
            "says what each subcommand reads, writes and exits with."
        ),
        epilog=wrap(
            "exit status: each subcommand's own (`promptd help vault seal`): 0 ok, 1 a finding or a vault "
            "error (a key that cannot open the file, a file that is not a sealed template), 2 a usage or input error."
        ),
        formatter_class=formatter,
    )
    actions = vault.add_subparsers(dest="vault_command", required=True, metavar="SUBCOMMAND", title="subcommands")
    seal = actions.add_parser(
        "seal",
        help="compile and lint a template, then seal it (AES-256-GCM)",
        description=wrap(
            "Compile and lint a plaintext template as `promptd lint` does, then seal it with the vault key under "
            "a template id and version (bound into the seal). A template with findings is not sealed: "
            "the findings are printed on stdout. The sealed file goes to -o FILE, else stdout."
        ),
        epilog=exit_status(
            (Exit.OK, "sealed"),
            (Exit.FINDINGS, "not sealed: the template has findings, or the vault key cannot be read (vault_locked)"),
            (
                Exit.USAGE,
                "usage or input error: bad arguments, a file that cannot be read or is not UTF-8 text, a file that is sealed already, an output that cannot be written, an invalid configuration",
            ),
        ),
        formatter_class=formatter,
    )
    seal.add_argument("file", help="the plaintext template")
    seal.add_argument("-o", "--output", help="where to write the sealed file (default stdout)")
    seal.add_argument("--id", default="apply_patch", help="template id bound into the seal: primary, subagent, apply_patch or an id of your own (default apply_patch)")
    seal.add_argument("--version", type=int, default=1, help="template version bound into the seal (default 1)")
    seal.add_argument("--key-file", help=KEY_HELP)
    seal.add_argument("--exempt", action="append", metavar="KIND", help="a tool kind exempt from the guard lint (repeatable; default from config)")
    _add_declarations(seal)
    seal.set_defaults(handler=run_vault_seal)
    verify = actions.add_parser(
        "verify",
        help="check that a sealed file opens with the key, compiles and lints clean (prints no plaintext)",
        description=wrap(
            "Check that a sealed file opens with the vault key, holds the template id asked for, compiles and "
            "lints clean, printing only its id and version (never its plaintext): for CI, before a sealed "
            "template ships."
        ),
        epilog=exit_status(
            (Exit.OK, "the file opens, compiles and lints clean"),
            (
                Exit.FINDINGS,
                "the template has findings (printed on stdout), or a vault error: the file cannot be read or is not sealed, the key cannot open it, it holds another id (vault_locked)",
            ),
            (Exit.USAGE, "usage or input error: bad arguments, an invalid configuration"),
        ),
        formatter_class=formatter,
    )
    verify.add_argument("file", help="the sealed file")
    verify.add_argument("--id", help="the template id the file must hold (default: any)")
    verify.add_argument("--key-file", help=KEY_HELP)
    verify.add_argument("--exempt", action="append", metavar="KIND", help="a tool kind exempt from the guard lint (repeatable; default from config)")
    _add_declarations(verify)
    verify.set_defaults(handler=run_vault_verify)
    opener = actions.add_parser(
        "open",
        help="print the plaintext of a sealed template",
        description=wrap("Print the plaintext of a sealed template (default: the configured or shipped Apply-Patch one), or write it to -o FILE, which only you can read (mode 0600)."),
        epilog=exit_status(
            (Exit.OK, "the plaintext was printed or written"),
            (Exit.FINDINGS, "a vault error: the file cannot be read or is not sealed, the key cannot open it, it holds another id (vault_locked)"),
            (Exit.USAGE, "usage or input error: bad arguments, an output that cannot be written, an invalid configuration"),
        ),
        formatter_class=formatter,
    )
    opener.add_argument("file", nargs="?", help="sealed file (default: the configured or shipped Apply-Patch template)")
    opener.add_argument("-o", "--output", help="write the plaintext to this file (mode 0600) instead of stdout")
    opener.add_argument("--id", help="the template id the file must hold (default: any)")
    opener.add_argument("--key-file", help=KEY_HELP)
    opener.set_defaults(handler=run_vault_open)
    _add_keygen(
        actions,
        "write a new random key to a file only you can read (missing folders are created, mode 0700)",
        "Write a new random vault key (32 bytes, as 64 hex digits) to FILE, mode 0600; missing folders are "
        "created, mode 0700. An existing file is never overwritten. Point vault.key_file or --key-file at it.",
        run_vault_keygen,
    )
    _add_keygen(
        commands,
        "write a new 256-bit key (the provenance key, or a vault key) to a file only you can read",
        "Write a new random 256-bit key (64 hex digits) to FILE, mode 0600; missing folders are created, mode "
        "0700. An existing file is never overwritten. Point reminders.provenance_key_file at it, so that "
        "reminder blocks written by one promptd verify in the next (docs/security.md), or vault.key_file.",
        run_keygen,
    )


def _add_keygen(commands: argparse._SubParsersAction, summary: str, description: str, handler: Callable[[Any, argparse.Namespace], int]) -> None:  # type: ignore[type-arg]
    from promptd.cli.helptext import exit_status, formatter, wrap

    keygen = commands.add_parser(
        "keygen",
        help=summary,
        description=wrap(description),
        epilog=exit_status(
            (Exit.OK, "the key was written"),
            (Exit.USAGE, "usage or input error: bad arguments, FILE exists already or cannot be written, an invalid configuration"),
            pipe=False,
        ),
        formatter_class=formatter,
    )
    keygen.add_argument("file")
    keygen.set_defaults(handler=handler)


# -- render, diff, vars and lint ----------------------------------------------------------------


def _render_inputs(parser: argparse.ArgumentParser, contexts: bool, single_context: bool = False) -> None:
    if contexts:
        parser.add_argument("--context", action="append", default=[], help="context file (JSON or YAML); repeatable with --snapshot; default: all defaults")
    elif single_context:
        parser.add_argument("--context", help="context file (JSON or YAML); default: all defaults")
    parser.add_argument("--body", help="file whose text is the prompt body (replaces the context's prompt_body)")
    parser.add_argument("--override", help="none | codex | custom:FILE (replaces the context's system_prompt)")
    parser.add_argument("--tool", action="append", default=[], metavar="KIND=NAME", help="a tool by kind, e.g. read=read_file (repeatable)")
    parser.add_argument("--tools", metavar="FILE", help="tools by kind from a JSON or YAML file ({kind: name} or {by_kind: {...}})")
    parser.add_argument("--param", action="append", default=[], metavar="KIND.NAME=CLIENT", help="a parameter name mapping (repeatable)")
    parser.add_argument("--flag", action="append", default=[], metavar="NAME[=true|false]", help="a template flag, true unless given; the name must be one a template reads")
    if contexts or not single_context:
        parser.add_argument(
            "--strict-undefined",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="an undefined name is an error (default: config prompt.strict_undefined, true)",
        )


class _Inputs:
    """The files a render reads, kept so errors can name them instead of `custom` or `body`."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.raw_context: Mapping[str, Any] = {}


def _params(config: Any, args: argparse.Namespace, context_file: str | None, inputs: _Inputs, *, custom: str | None = None) -> dict[str, Any]:
    """prompt/render params from the command's files and flags, the custom template `custom`
    (a file name) in place of --override when given; raises PromptdError or Failed."""
    from promptd.prompt.context import read_file_data

    context: Any = read_file_data(context_file) if context_file else {}
    if not isinstance(context, Mapping):
        raise Failed(f"{context_file}: the context file must hold an object")
    inputs.raw_context = context
    context = dict(context)
    if context_file:
        inputs.files["context"] = context_file
    if args.body:
        context["prompt_body"] = _read_text(args.body)
        inputs.files["body"] = args.body
    override = f"custom:{custom}" if custom is not None else args.override
    if override:
        context["system_prompt"] = _override(override)
        if isinstance(context["system_prompt"], dict):
            inputs.files["custom"] = override[len("custom:") :]
    params: dict[str, Any] = {"context": context, "params": _param_names(args.param), "flags": _flags(args.flag)}
    tools = _tools(args.tools, args.tool)
    if tools is not None:
        params["tools"] = {"by_kind": tools}
    _check_flags(params["flags"], context, sealed_elsewhere=bool(config.vault.template_file))
    return params


def _check_flags(flags: Mapping[str, bool], context: Mapping[str, Any], sealed_elsewhere: bool) -> None:
    """A flag must be one a template of this render can read: a default flag, or a name the custom
    template, the body or a shipped template reads. A misspelled --flag is an error, not a no-op.
    A sealed template of one's own (config vault.template_file) cannot be read here, so with the
    codex override and such a template every name is accepted."""
    if not flags or (sealed_elsewhere and context.get("system_prompt") == "codex"):
        return
    from promptd.prompt import variables

    override = context.get("system_prompt")
    sources = [s for s in (context.get("prompt_body"), override.get("custom") if isinstance(override, Mapping) else None) if isinstance(s, str)]
    readable = variables.flag_names() | variables.shipped_reads()
    for source in sources:
        readable |= variables.reads(source)
    for name in flags:
        if name not in readable:
            hint = variables.suggest(name, readable)
            more = f"; did you mean {' or '.join(hint)}?" if hint else f" (flags a template can read: {', '.join(sorted(variables.flag_names()))}, or any name your template reads)"
            raise Failed(f"--flag {name}: no template of this render reads a flag of that name{more}")


def _render_each(config: Any, args: argparse.Namespace, context_files: list[str | None]) -> list[tuple[str | None, dict[str, Any]]]:
    """One render per context file, each result with its size in UTF-8 bytes; raises Failed on
    the first failure."""
    renders, failures = _render_all(config, args, context_files, keep_going=False)
    if failures:
        raise failures[0][1]
    return renders


def _render_all(
    config: Any, args: argparse.Namespace, context_files: list[str | None], *, keep_going: bool, custom: str | None = None
) -> tuple[list[tuple[str | None, dict[str, Any]]], list[tuple[str | None, Failed]]]:
    """(renders, failures): one render per context file, each result with its size in UTF-8
    bytes; a context that fails is a failure explained as one line, and with `keep_going` the
    others still render. `custom` (a file name) replaces --override with custom:FILE."""
    from promptd.errors import PromptdError
    from promptd.local import Local, LocalError

    door = Local(config)
    renders = []
    failures: list[tuple[str | None, Failed]] = []
    for context_file in context_files:
        inputs = _Inputs()
        try:
            params = _params(config, args, context_file, inputs, custom=custom)
            if args.strict_undefined is not None:
                params["strict_undefined"] = args.strict_undefined
            result = dict(door.call("prompt/render", params))
        except PromptdError as exc:
            failures.append((context_file, _explained(exc.message, exc.kind, exc.to_data(), inputs)))
        except LocalError as failure:
            failures.append((context_file, _explained(failure.message, failure.kind or "error", failure.data, inputs)))
        except Failed as failed:
            failures.append((context_file, failed))
        else:
            result["bytes"] = len(result["text"].encode("utf-8", "surrogatepass"))
            renders.append((context_file, result))
        if failures and not keep_going:
            break
    return renders, failures


def run_render(config: Any, args: argparse.Namespace) -> int:
    if args.update and not args.snapshot:
        raise Failed("--update goes with --snapshot DIR")
    if args.snapshot and (args.output or args.json):
        raise Failed("--snapshot DIR writes its own files and status lines; it does not take -o or --json")
    if len(args.context) > 1 and not args.snapshot:
        raise Failed("several --context files need --snapshot DIR (or use `promptd diff LEFT RIGHT`)")
    if args.snapshot and not args.context:
        raise Failed("--snapshot DIR needs at least one --context FILE (its name names the snapshot)")
    if args.snapshot:
        from promptd.cli import workflow as cli_workflow

        # Every context is rendered: a bad one is reported and the others still compared (or
        # written), so one broken file does not hide what the rest would show.
        renders, failures = _render_all(config, args, args.context, keep_going=True)
        for _, failed in failures:
            exits.say(args.command_path, failed.message)
        status = cli_workflow.snapshots(Path(args.snapshot), renders, update=args.update, failed=[name for name, _ in failures])
        return Exit.USAGE if failures else status
    renders = _render_each(config, args, args.context or [None])
    result = renders[0][1]
    if args.json:
        payload = exactjson.dumps_indented(result) + b"\n"
    else:
        # Exactly the text, with no newline added: `sha256sum` of the output equals `sha256` (a
        # lone surrogate from the context is written as its WTF-8 bytes, which sha256 is over).
        payload = result["text"].encode("utf-8", "surrogatepass")
    if args.output:
        try:
            Path(args.output).write_bytes(payload)
        except OSError as exc:
            raise Failed(f"cannot write {args.output}: {exits.os_reason(exc)}") from None
    else:
        sys.stdout.buffer.write(payload)
    return Exit.OK


def run_diff(config: Any, args: argparse.Namespace) -> int:
    from promptd.cli import workflow as cli_workflow

    if args.template:
        return _diff_templates(config, args)
    if args.context:
        raise Failed("--context goes with --template OLD NEW; without --template, LEFT and RIGHT are the two context files")
    renders = _render_each(config, args, [args.left, args.right])
    return cli_workflow.diff(renders[0], renders[1])


def _diff_templates(config: Any, args: argparse.Namespace) -> int:
    """Both template versions over every context: a diff per context, then a summary. A context
    that does not render with either version is reported once per distinct error; the others are
    still compared."""
    from promptd.cli import workflow as cli_workflow

    if args.override:
        raise Failed("--template OLD NEW are the custom templates compared; it does not take --override")
    contexts: list[str | None] = list(args.context) or [None]
    old, old_failures = _render_all(config, args, contexts, keep_going=True, custom=args.left)
    new, new_failures = _render_all(config, args, contexts, keep_going=True, custom=args.right)
    reported: set[str] = set()
    for _, failed in old_failures + new_failures:
        if failed.message not in reported:
            reported.add(failed.message)
            exits.say(args.command_path, failed.message)
    status = cli_workflow.template_diff(args.left, args.right, contexts, dict(old), dict(new))
    return Exit.USAGE if reported else status


def run_vars(config: Any, args: argparse.Namespace) -> int:
    from promptd.cli import workflow as cli_workflow
    from promptd.errors import PromptdError
    from promptd.local import Local, LocalError

    door = Local(config)
    inputs = _Inputs()
    try:
        params = _params(config, args, args.context, inputs)
        result = door.call("prompt/vars", params)
    except PromptdError as exc:
        raise _explained(exc.message, exc.kind, exc.to_data(), inputs) from None
    except LocalError as failure:
        raise _explained(failure.message, failure.kind or "error", failure.data, inputs) from None
    if args.json:
        sys.stdout.buffer.write(exactjson.dumps_indented(result) + b"\n")
    else:
        sys.stdout.write(cli_workflow.variables_text(result["variables"]) + cli_workflow.reads_text(result["reads"]))
    return Exit.OK


def run_lint(config: Any, args: argparse.Namespace) -> int:
    from promptd.local import Local, LocalError

    exempt = [] if args.strict else args.exempt
    door = Local(config)
    findings: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    lines: list[str] = []  # the errors as stderr says them, each naming its file
    for name in args.files:
        try:
            template = _read_stdin() if name == "-" else _read_text(name)
        except _Unreadable as exc:
            errors.append({"file": name, "message": exc.message, "error": exc.kind})
            lines.append(exc.message)
            continue
        # `--flag beta=true` as render takes it declares the name `beta`.
        flags = [flag.partition("=")[0] for flag in args.flag]
        params: dict[str, Any] = {"template": template, "strict_undefined": args.strict_undefined, "flags": flags, "tool_kinds": args.kind}
        if exempt is not None:
            params["exempt_kinds"] = exempt
        try:
            result = door.call("prompt/lint", params)
        except LocalError as failure:
            message, kind = failure.message.replace("template: ", "", 1), failure.kind or "error"
            errors.append({"file": name, "message": message, "error": kind})
            lines.append(f"{name}: {message} ({kind})")
            continue
        for v in result["violations"]:
            findings.append({"file": name, **v})
            if not args.json:
                severity = "" if v["severity"] == "error" else f"{v['severity']}: "
                sys.stdout.write(f"{name}:{v['line']}:{v['column']}: {severity}{v['kind']}: {v['message']}\n")
    if args.json:
        sys.stdout.buffer.write(exactjson.dumps_indented({"findings": findings, "errors": errors}) + b"\n")
    else:
        for line in lines:
            # Lint goes on with the other files, so there may be several lines.
            exits.say(args.command_path, line)
    if errors:
        return Exit.USAGE
    return Exit.FINDINGS if any(f["severity"] == "error" for f in findings) else Exit.OK


# -- vault -------------------------------------------------------------------------------------


def _vault_key(config: Any, key_file: str | None) -> Any:
    """The KeyChoice: --key-file, else the configuration's key source (vault.choose_key)."""
    from promptd.prompt import vault

    if key_file:
        return vault.KeyChoice(vault.read_key_file(key_file), "key_file", key_file)
    return vault.choose_key(config.vault, os.environ)


def _add_declarations(command: argparse.ArgumentParser) -> None:
    """What a host sends that the lint cannot know: flag names and extra tool kinds."""
    command.add_argument("--flag", action="append", default=[], metavar="NAME", help="a flag your host sends (repeatable): a defined name")
    command.add_argument("--kind", action="append", default=[], metavar="KIND", help="a tool kind your host sends besides the documented ones")


def _check_template(config: Any, name: str, source: str, args: argparse.Namespace) -> list[str]:
    """Compiles and lints `source` as `prompt/lint` would; the findings as `name:line:col: kind:
    message` lines (empty when clean). Nothing of the source itself is in them."""
    from promptd.errors import TemplateSyntax
    from promptd.prompt import lint
    from promptd.prompt.engine import engine

    try:
        # Compiled, never cached: the sealed text must not stay behind in the compile cache.
        engine().compile(source, name, cache=False)
    except TemplateSyntax as exc:
        return [f"{name}:{exc.data.get('line') or 1}:{exc.data.get('column') or 1}: syntax: {exc.data.get('cause')}"]
    kinds = config.prompt.exempt_kinds if args.exempt is None else args.exempt
    flags = [flag.partition("=")[0] for flag in args.flag]
    found = lint.lint(source, kinds, flags=flags, tool_kinds=args.kind)
    # Portability warnings do not stop a seal (they do not stop `promptd lint` either).
    return [f"{name}:{v.line}:{v.column}: {v.kind}: {v.message}" for v in found if v.severity == lint.ERROR]


def _vault_error(exc: Any) -> Failed:
    """A vault error (a key that cannot be read or cannot open the file, a file that is not a
    sealed template): exit 1 from the vault commands, whose findings they are."""
    return Failed(f"{exc.message} ({exc.kind})", Exit.FINDINGS)


def run_vault_seal(config: Any, args: argparse.Namespace) -> int:
    from promptd.errors import PromptdError
    from promptd.prompt import vault
    from promptd.prompt.context import SealedOverride

    try:
        SealedOverride(sealed=args.id)
    except ValueError:
        raise Failed(f"--id {args.id!r}: use letters, digits, '.', '_' or '-' (at most 64)") from None
    plaintext = bytearray(_read_bytes(args.file))
    try:
        try:
            source = plaintext.decode("utf-8")
        except UnicodeDecodeError:
            raise Failed(f"cannot read {args.file}: not UTF-8 text") from None
        if vault.is_envelope(source):
            raise Failed(f"{args.file} is already sealed; seal the plaintext template")
        findings = _check_template(config, args.file, source, args)
        if findings:
            print("\n".join(findings))
            raise Failed(f"{args.file} was not sealed: fix the findings above first", Exit.FINDINGS)
        try:
            choice = _vault_key(config, args.key_file)
        except PromptdError as exc:
            raise _vault_error(exc) from None
        sealed = vault.seal(plaintext, choice.key, args.id, args.version)
    finally:
        vault.wipe(plaintext)
    if choice.source == "default":
        exits.say(
            args.command_path,
            'sealed with the shipped default key: this is obfuscation, not secrecy (render it with vault.key_source = "shipped")',
        )
    if args.output:
        try:
            Path(args.output).write_bytes(sealed)
        except OSError as exc:
            raise Failed(f"cannot write {args.output}: {exits.os_reason(exc)}") from None
    else:
        sys.stdout.buffer.write(sealed)
    return Exit.OK


def _open_sealed(config: Any, args: argparse.Namespace) -> tuple[bytes, Any]:
    """(plaintext, the sealed header): the file named, else the configured or shipped Apply-Patch
    one, opened with the chosen key; raises Failed."""
    from promptd.errors import PromptdError
    from promptd.prompt import vault

    try:
        choice = _vault_key(config, args.key_file)
        if args.file:
            path = Path(args.file)
        else:
            path = Path(vault.own_templates(config.vault).get(args.id or vault.APPLY_PATCH_ID) or vault.SHIPPED_FILE)
        opened = vault.Vault(path=path, key=choice.key, key_source=choice.source, template_id=args.id or "", key_where=choice.where)
        return opened.open_bytes(), opened.read()
    except PromptdError as exc:
        raise _vault_error(exc) from None


def run_vault_verify(config: Any, args: argparse.Namespace) -> int:
    plaintext, header = _open_sealed(config, args)
    try:
        source = plaintext.decode("utf-8")
    except UnicodeDecodeError:
        raise Failed(f"{args.file} holds no UTF-8 text (vault_locked)", Exit.FINDINGS) from None
    findings = _check_template(config, args.file, source, args)
    if findings:
        print("\n".join(findings))
        return Exit.FINDINGS
    print(f"{args.file}: template {header.template_id!r} version {header.version} opens with the vault key, compiles and lints clean")
    return Exit.OK


def run_vault_open(config: Any, args: argparse.Namespace) -> int:
    plaintext, _ = _open_sealed(config, args)
    if args.output:
        try:
            _write_private(args.output, plaintext)
        except OSError as exc:
            raise Failed(f"cannot write {args.output}: {exits.os_reason(exc)}") from None
    else:
        sys.stdout.buffer.write(plaintext)
    return Exit.OK


def run_vault_keygen(config: Any, args: argparse.Namespace) -> int:
    return _write_new_key(args.file, "vault key")


def run_keygen(config: Any, args: argparse.Namespace) -> int:
    return _write_new_key(args.file, "key")


def _write_new_key(name: str, what: str) -> int:
    from promptd import keyfile

    try:
        _private_folders(Path(name).parent)
        _write_private(name, keyfile.new_key().hex().encode() + b"\n", exclusive=True)
    except FileExistsError:
        raise Failed(f"{name} already exists; refusing to overwrite a key") from None
    except OSError as exc:
        raise Failed(f"cannot write the key to {name}: {exits.os_reason(exc)}") from None
    print(f"wrote a new {what} to {name} (mode 0600)", file=sys.stderr)
    return Exit.OK


def _private_folders(folder: Path) -> None:
    """Creates the missing folders of `folder`, each mode 0700 (only the ones created: an
    existing folder keeps its mode)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700)
        path.chmod(0o700)  # mkdir's mode is filtered by the umask


def _write_private(name: str, data: bytes, exclusive: bool = False) -> None:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(name, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its old mode otherwise
        os.write(fd, data)
    finally:
        os.close(fd)


# -- helpers -----------------------------------------------------------------------------------


class _Unreadable(Failed):
    """A file that cannot be read: an input error (exit 2); `kind` is what `lint --json` reports
    as its `error` (`unreadable`, or the rule a refused file broke: `not_regular`...)."""

    def __init__(self, message: str, kind: str = "unreadable") -> None:
        super().__init__(message)
        self.kind = kind


def _read_bytes(name: str) -> bytes:
    """A file the user named, by the named-file rule (promptd.files): symlinks followed (the user
    chose the path), but only a regular file, never on a kernel filesystem, at most 16 MiB, so a
    FIFO cannot hang the command and /dev/zero cannot exhaust its memory."""
    try:
        return files.read_named(name)
    except files.Refused as exc:
        # A file that is not there (or not readable) is what it always was; a refused one says
        # which rule it broke.
        kind = "unreadable" if exc.reason in exits.PLAIN_REFUSALS else exc.reason.value
        raise _Unreadable(exits.cannot_read(name, exc.detail, exc.reason), kind) from None


def _read_text(name: str) -> str:
    # The bytes as they are: no newline translation here, so the CLI hands the engine exactly what
    # a host would send over the wire, and the engine's one text path (BOM, CRLF) does the rest.
    data = _read_bytes(name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unreadable(f"cannot read {name}: not UTF-8 text") from None


def _read_stdin() -> str:
    # As a named file is: a stream that never ends is refused at the cap, never read whole.
    data = sys.stdin.buffer.read(files.MAX_NAMED_BYTES + 1)
    if len(data) > files.MAX_NAMED_BYTES:
        raise _Unreadable(f"cannot read stdin: over {files.MAX_NAMED_BYTES} bytes (too_large)", files.Refusal.TOO_LARGE.value)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unreadable("cannot read stdin: not UTF-8 text") from None


def _explained(message: str, kind: str, data: Mapping[str, Any] | None, inputs: _Inputs) -> Failed:
    """A render-side failure as one line, naming the file it is in (`my.jinja:3:7: ...` instead of
    `template 'custom' line 3`), with hints the wire leaves to the reader: "did you mean" for an
    unknown context field, and a YAML value that was read as a date. Exit 2."""
    from promptd.cli import workflow as cli_workflow

    return Failed(cli_workflow.explain(message, kind, data or {}, inputs.files, inputs.raw_context))


def _override(value: str) -> Any:
    lowered = value.lower()
    if lowered in OVERRIDES:
        return lowered
    if lowered.startswith("custom:") and len(value) > len("custom:"):
        return {"custom": _read_text(value[len("custom:") :])}
    raise Failed("--override is none, codex or custom:FILE")


def _tools(path: str | None, pairs: list[str]) -> dict[str, str] | None:
    from promptd.prompt.context import read_file_data

    if path is None and not pairs:
        return None
    tools: dict[str, str] = {}
    if path is not None:
        data = read_file_data(path)
        if isinstance(data, Mapping) and isinstance(data.get("by_kind"), Mapping):
            data = data["by_kind"]
        if not isinstance(data, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            raise Failed("--tools FILE must map tool kinds to tool names")
        tools.update(data)
    for pair in pairs:
        kind, sep, name = pair.partition("=")
        if not sep or not kind:
            raise Failed(f"--tool {pair!r}: expected KIND=NAME")
        tools[kind] = name
    return tools


def _param_names(pairs: list[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for pair in pairs:
        left, sep, client = pair.partition("=")
        kind, dot, canonical = left.partition(".")
        if not sep or not dot or not kind or not canonical:
            raise Failed(f"--param {pair!r}: expected KIND.NAME=CLIENT")
        out.setdefault(kind, {})[canonical] = client
    return out


def _flags(pairs: list[str]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for pair in pairs:
        name, sep, word = pair.partition("=")
        if not name:
            raise Failed(f"--flag {pair!r}: expected NAME or NAME=BOOL")
        if not sep or word.lower() in TRUE_WORDS:
            out[name] = True
        elif word.lower() in FALSE_WORDS:
            out[name] = False
        else:
            raise Failed(f"--flag {pair!r}: the value must be true or false")
    return out
