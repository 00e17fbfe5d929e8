"""The stdio transport (entry layer): `server` (the event loop, signals, the exit), `reader` (stdin),
`writer` (the one frame writer) and `peer` (calls to the client). The only package that touches
the protocol's descriptors; every protocol rule is in promptd.rpc.
"""
