"""File-system errors at the command boundary: ``error:`` and an exit code, never a traceback.

The offline commands and ``deploy`` take paths and names from the user (a workspace, a spec
file, ``--dir``, ``--root``): a path longer than PATH_MAX, a component longer than NAME_MAX, a
symlink loop, a read-only or full disk all end as an :class:`OSError` somewhere below. The
layers below turn the ones they expect into kschedctl errors with their own words;
:func:`guard_paths` catches the rest of the class at the command, with the same exit codes
(5 when something is missing, else 1).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def guard_paths(command: Callable[P, R]) -> Callable[P, R]:
    """``command`` with any :class:`OSError` it lets escape raised as a KschedError."""

    @functools.wraps(command)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except OSError as err:
            # on use: render.workspace is not needed by every command this guards
            from kschedctl.render.workspace import path_error

            raise path_error(err, "reading or writing a file") from err

    return guarded
