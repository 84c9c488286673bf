"""Loading scheduling plugins (:mod:`.plugins` says what a plugin is) and refusing the
unusable ones at start with a :class:`~kschedctl.base.errors.PluginError` (exit 3) naming
their source.

:func:`plugin_from_source` loads a plugin from its file name and text (what a ConfigMap
carries); :func:`load_plugin` from a path or module name; :func:`load_plugins` a list.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
import sys
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kschedctl.base.errors import NotFoundError, PluginError, SpecError, missing_file, printable
from kschedctl.base.userfile import read_user_file

from .plugins import Plugin, exception_text

__all__ = ["check_unique", "load_plugin", "load_plugins", "plugin_from_source"]

MAX_WEIGHT = 100
MODULE_PREFIX = "kschedctl_plugins"  # sys.modules name of plugins loaded from files or text
_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _refuse(source: str, message: str, hint: str | None = None) -> PluginError:
    return PluginError(
        "",
        message,
        hint
        or 'see docs/commands/own-scheduler.md, "Scheduling plugins", for what a plugin defines',
        source=source,
    )


def _arity_problem(func: Callable[..., Any], count: int) -> str | None:
    """Whether ``func`` can be called with ``count`` positional arguments."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None  # builtins without a signature: trust them
    try:
        sig.bind(*range(count))
    except TypeError as err:
        return str(err)
    return None


def _plugin_from(obj: Any, default_name: str, source: str) -> Plugin:
    """A :class:`Plugin` from a module or object's attributes; PluginError if unusable."""
    name = getattr(obj, "NAME", default_name)
    if not isinstance(name, str) or not _NAME.match(name):
        raise _refuse(
            source,
            f"NAME {printable(repr(name), 80)} must be 1-63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit (it names the plugin in events and "
            "metrics)",
        )
    points: dict[str, Any] = {}
    for point, count in (("pre_filter", 2), ("filter", 3), ("score", 3)):
        func = getattr(obj, point, None)
        if func is None:
            continue
        if not callable(func):
            raise _refuse(source, f"{point} must be a function, not {type(func).__name__}")
        problem = _arity_problem(func, count)
        if problem:
            args = "(pod, ctx)" if count == 2 else "(pod, node, ctx)"
            raise _refuse(source, f"{point} cannot be called as {point}{args}: {problem}")
        points[point] = func
    if "filter" not in points and "score" not in points:
        raise _refuse(
            source,
            "defines neither filter(pod, node, ctx) nor score(pod, node, ctx): a plugin needs "
            "at least one of them",
        )
    weight = getattr(obj, "WEIGHT", 1)
    if (
        isinstance(weight, bool)
        or not isinstance(weight, int | float)
        or not math.isfinite(weight)
        or not 0 < weight <= MAX_WEIGHT
    ):
        raise _refuse(
            source,
            f"WEIGHT {printable(repr(weight), 80)} must be a number greater than 0 and at most "
            f"{MAX_WEIGHT} (it multiplies the plugin's 0..100 score)",
        )
    return Plugin(
        name,
        source,
        filter=points.get("filter"),
        score=points.get("score"),
        weight=weight,
        pre_filter=points.get("pre_filter"),
    )


def plugin_from_source(file_name: str, text: str, *, source: str | None = None) -> Plugin:
    """The plugin in the Python ``text`` of file ``file_name`` (e.g. ``rack_match.py``, as
    a ConfigMap key holds it); its default NAME is the file name without ``.py``.

    ``source`` names it in messages (default: ``file_name``). The text runs as a module
    of its own (``kschedctl_plugins.<stem>`` in ``sys.modules``): importing it runs its
    top-level code. Anything wrong is a :class:`PluginError` (exit 3) naming the source.
    """
    where = source or file_name
    stem = Path(file_name).name.removesuffix(".py")
    if not _IDENTIFIER.match(stem):
        raise _refuse(
            where,
            f"the file name {printable(repr(file_name), 80)} must be a Python module name "
            "ending in .py (letters, digits and '_')",
        )
    try:
        code = compile(text, where, "exec")
    except SyntaxError as err:
        line = f" (line {err.lineno})" if err.lineno else ""
        raise _refuse(where, f"is not valid Python{line}: {printable(err.msg or '', 200)}") from err
    except ValueError as err:  # NUL bytes
        raise _refuse(where, f"is not valid Python: {printable(str(err), 200)}") from err
    module_name = f"{MODULE_PREFIX}.{stem}"
    module = types.ModuleType(module_name)
    module.__file__ = where
    previous = sys.modules.get(module_name)
    # Registered while it runs: dataclasses and typing look their module up by name.
    sys.modules[module_name] = module
    try:
        exec(code, module.__dict__)  # running the user's plugin is the point
    except (Exception, SystemExit) as err:
        if previous is not None:
            sys.modules[module_name] = previous
        else:
            del sys.modules[module_name]
        raise _refuse(where, f"importing it raised {exception_text(err)}") from err
    return replace(_plugin_from(module, stem, where), file=Path(file_name).name, text=text)


def load_plugin(spec: str) -> Plugin:
    """A plugin from ``PATH.py`` (a file), ``package.module`` or ``package.module:object``
    (importable from the scheduler's Python path). PluginError (exit 3) if unusable."""
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        try:
            text = read_user_file(spec)
        except NotFoundError as err:  # exit 5, as a missing file is everywhere
            raise missing_file(f"{printable(spec)}: cannot read the plugin: no such file") from err
        except SpecError as err:
            raise _refuse(spec, f"cannot read the plugin: {err.detail}") from err
        return plugin_from_source(Path(spec).name, text, source=spec)
    module_name, _, attr = spec.partition(":")
    if not all(_IDENTIFIER.match(part) for part in module_name.split(".")) or (
        attr and not _IDENTIFIER.match(attr)
    ):
        raise _refuse(
            spec,
            "is neither a file ending in .py nor a module name (package.module or "
            "package.module:object)",
        )
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as err:
        raise _refuse(spec, f"cannot import it: {exception_text(err)}") from err
    if not attr:
        return _plugin_from(module, module_name.rpartition(".")[2], spec)
    try:
        obj = getattr(module, attr)
    except AttributeError as err:
        raise _refuse(spec, f"module {module_name} has no attribute {attr}") from err
    return _plugin_from(obj, attr, spec)


def load_plugins(specs: Iterable[str]) -> tuple[Plugin, ...]:
    """Every plugin of ``specs`` in order; two plugins with one NAME are refused."""
    return check_unique(tuple(load_plugin(s) for s in specs))


def check_unique(plugins: Sequence[Plugin]) -> tuple[Plugin, ...]:
    """``plugins`` unchanged; a PluginError if two share a NAME (events and metrics name them)."""
    seen: dict[str, Plugin] = {}
    for p in plugins:
        if p.name in seen:
            raise _refuse(
                p.source,
                f"plugin name {p.name!r} is also the name of {seen[p.name].source}",
                "give one of them another NAME",
            )
        seen[p.name] = p
    return tuple(plugins)
