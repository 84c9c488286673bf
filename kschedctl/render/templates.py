"""The Jinja environment over the top-level ``templates/`` (one template per rendered file).

Structure lives in the templates; user data goes through the ``to_yaml`` filter
(:func:`kschedctl.base.yamltext.to_yaml`) so nothing is indented by hand. Undefined names are
errors (``StrictUndefined``). jinja2 is imported on the first template only: forms without a
template (``render --as config``) never load it (start-up budget, benchmarks/startup.py).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kschedctl.base.yamltext import to_yaml
from kschedctl.render.escape import comment, unit_value, yaml_text_map

if TYPE_CHECKING:
    import jinja2


def templates_dir() -> Path:
    """Templates shipped in the wheel, or the source tree's for an editable install."""
    installed = Path(__file__).parents[1] / "_data" / "templates"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "templates"


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    import jinja2  # on use: render --as config and validate need no template

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # noqa: S701 - YAML and systemd units, not HTML
    )
    # One filter per target (kschedctl.render.escape): every {{ }} of user data ends in one.
    env.filters["to_yaml"] = to_yaml
    env.filters["comment"] = comment
    env.filters["unit_value"] = unit_value
    env.filters["to_yaml_text"] = yaml_text_map
    return env


def render_template(template: str, **context: Any) -> str:
    """``template`` (a file name in templates/) rendered with ``context``."""
    return environment().get_template(template).render(**context)


def content_hash(text: str) -> str:
    """The ``kschedctl.io/config-hash`` of a rendered config: a changed config rolls the pods."""
    return hashlib.sha256(text.encode()).hexdigest()
