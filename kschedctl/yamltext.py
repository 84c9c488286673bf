"""YAML text from plain data: the one dumper behind rendered files and ``-o yaml``.

Pure (PyYAML only), so every layer may use it. Key order is always kept: templates and the
result dataclasses define a stable order. The two uses differ on purpose, hence one parameter:

- a template slot (the default, the ``to_yaml`` Jinja filter): block style for non-empty
  collections, one line for scalars and empty collections, no trailing newline (the template
  places and indents it); non-ASCII is escaped; libyaml's emitter, ~10x faster than PyYAML's
  own and giving the same text for our data (the golden files pin it).
- ``document=True`` (``-o yaml``): a whole document ending in a newline, non-ASCII kept as is
  for people reading it, written by PyYAML's own emitter (what ``-o yaml`` has always printed).
"""

from __future__ import annotations

from typing import Any

import yaml

_FAST_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_yaml(value: Any, *, document: bool = False) -> str:
    """``value`` as YAML: a template slot, or with ``document`` a whole document."""
    if document:
        return yaml.dump(
            value,
            Dumper=yaml.SafeDumper,
            sort_keys=False,
            default_flow_style=False,
            allow_unicode=True,
        )
    if isinstance(value, (dict, list)) and value:
        text = yaml.dump(value, Dumper=_FAST_DUMPER, sort_keys=False, default_flow_style=False)
        return text.rstrip("\n")
    text = yaml.dump(value, Dumper=_FAST_DUMPER, default_flow_style=True, width=10_000)
    return text.removesuffix("\n...\n").rstrip("\n")
