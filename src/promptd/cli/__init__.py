"""The command line (entry layer): `main` (the argparse-free `serve` path a host spawns, and every
other command), `exits` (the exit statuses, the one error line, a closed stdout), `parser` (argparse
and help texts, with `helptext`, the shape they share), `prompt` (the prompt and vault commands),
`workflow` (their plain formatting and files). Commands call the in-process door (promptd.local),
never the method table directly. Importing this package imports nothing: `serve` stays lean.
"""
