"""File citations (docs/citations.md): citation markers in model output, source description, plain-text export.

Domain layer: plain functions over plain data. Imports nothing from promptd.rpc or promptd.methods.

- `markers`: splits text into text / citation / marker segments in all three marker forms, with
  a streaming `pending` tail;
- `sources`: what a host shows for a source URL (label, icon, how to open it);
- `export`: plain text for copying (`[n]` references and a Sources list) and marker stripping.
"""
