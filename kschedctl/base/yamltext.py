"""YAML text from plain data: the one dumper behind rendered files and ``-o yaml``.

Pure (PyYAML only), so every layer may use it. Key order is always kept: templates and the
result dataclasses define a stable order. The two uses differ on purpose, hence one parameter:

- a template slot (the default, the ``to_yaml`` Jinja filter): block style for non-empty
  collections, one line for scalars and empty collections, no trailing newline (the template
  places and indents it); non-ASCII is escaped; libyaml's emitter, ~10x faster than PyYAML's
  own and giving the same text for our data (the golden files pin it).
- ``document=True`` (``-o yaml``): a whole document ending in a newline, non-ASCII kept as is
  for people reading it, written by PyYAML's own emitter (what ``-o yaml`` has always printed);
  a string holding a character a terminal acts on (:mod:`kschedctl.base.terminal`: ESC, C1, bidi
  overrides, U+2028, ``\\x85``…) is written double-quoted with every such character escaped,
  so the document reaches a terminal inert and reads back exactly.
"""

from __future__ import annotations

from typing import Any

import yaml

from kschedctl.base import terminal

_FAST_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _DocumentDumper(yaml.SafeDumper):
    """PyYAML's emitter, escaping what a terminal acts on: with ``allow_unicode`` it writes
    bidi overrides, zero-width and private-use characters raw even in a double-quoted
    scalar, and a ``\\x85`` raw in a single-quoted one (where it reads back as a space)."""

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        if terminal.is_inert(text, "\n\t"):
            super().write_double_quoted(text, split)
            return
        # this scalar only: every non-ASCII character escaped (\u202E), the rest kept
        self.allow_unicode = False
        try:
            super().write_double_quoted(text, split)
        finally:
            self.allow_unicode = True


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = None if terminal.is_inert(text, "\n\t") else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_DocumentDumper.add_representer(str, _represent_text)


def to_yaml(value: Any, *, document: bool = False) -> str:
    """``value`` as YAML: a template slot, or with ``document`` a whole document."""
    if document:
        return yaml.dump(
            value,
            Dumper=_DocumentDumper,
            sort_keys=False,
            default_flow_style=False,
            allow_unicode=True,
        )
    if isinstance(value, (dict, list)) and value:
        text = yaml.dump(value, Dumper=_FAST_DUMPER, sort_keys=False, default_flow_style=False)
        return text.rstrip("\n")
    text = yaml.dump(value, Dumper=_FAST_DUMPER, default_flow_style=True, width=10_000)
    return text.removesuffix("\n...\n").rstrip("\n")
