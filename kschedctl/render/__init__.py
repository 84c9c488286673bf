"""Spec → text (pure): the forms table, the template environment, contexts, the workspace writer.

- ``forms``: the FORMS table (one row per rendered form), ``render()`` and ``render_workspace()``
- ``context``: spec → template context (and the labels of every object)
- ``builtin``: what differs in that context for ``program: builtin`` (kschedctl's own scheduler)
- ``templates``: the Jinja environment over the top-level ``templates/``
- ``added_profile``: ``render --as config --add-to``: an existing config plus the spec's profiles
- ``workspace``: writes a ``create`` workspace atomically

Cheap to import (the CLI does so at start-up): ``add_profile`` is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedctl.render.forms import DEPLOY_FORMS, FORMS, HOST_FORMS, render, render_workspace

if TYPE_CHECKING:
    # on first use: `import kschedctl.render` stays cheap
    from kschedctl.render.added_profile import add_profile

__all__ = ["DEPLOY_FORMS", "FORMS", "HOST_FORMS", "add_profile", "render", "render_workspace"]


def __getattr__(name: str) -> Any:
    if name == "add_profile":
        # on first use: `import kschedctl.render` stays cheap
        from kschedctl.render.added_profile import add_profile

        return add_profile
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
