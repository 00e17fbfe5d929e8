"""promptd: the sidecar that prepares everything a model sees besides the user's own words."""

__version__ = "0.1.0"
PROTOCOL_VERSION = "2026-11-01"
