"""Strict shape checks for YAML data: unknown fields and wrong types become Problems.

Pure. kube-scheduler decodes its config strictly, and kschedctl specs are loaded the same way,
so a typo is an error that names the field (with a "did you mean") instead of being ignored.
A schema maps a field name to its Python type, a tuple of types, or None (anything).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from kschedctl.config.shapes import shown
from kschedctl.errors import Problem

_TYPE_NAMES = {bool: "a boolean", int: "an integer", str: "a string", dict: "a mapping"}
_TYPE_NAMES[list] = "a list"
NUMBER = (int, float)


def type_ok(value: Any, expected: Any) -> bool:
    if value is None or expected is None:
        return True  # null decodes to the zero value in Go
    types = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool) and bool not in types:
        return False  # YAML true is not a number
    return isinstance(value, types)


def type_name(expected: Any) -> str:
    if isinstance(expected, tuple):
        return "a number"
    return _TYPE_NAMES.get(expected, str(expected))


def unknown_field_message(key: str, allowed: Sequence[str]) -> str:
    import difflib  # only on errors: keeps start-up lean

    close = difflib.get_close_matches(str(key), list(allowed), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown field{hint}"


def check_fields(
    obj: Any, schema: Mapping[str, Any], path: str, out: list[Problem]
) -> dict[str, Any]:
    """Report unknown fields and wrong types; return the fields of known names and right types.

    What was reported is left out of the result, so the rules that read it next only ever see
    values of the declared type (a list where a name belongs is reported, never hashed).
    """
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        out.append(Problem(path, f"must be a mapping, not {type(obj).__name__}"))
        return {}
    typed: dict[str, Any] = {}
    for key, value in obj.items():
        child = join(path, key if isinstance(key, str) else shown(key))
        if key not in schema:
            out.append(Problem(child, unknown_field_message(key, list(schema))))
        elif not type_ok(value, schema[key]):
            out.append(Problem(child, f"must be {type_name(schema[key])}, not {shown(value)}"))
        else:
            typed[key] = value
    return typed


def check_list(obj: Any, path: str, out: list[Problem]) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        out.append(Problem(path, f"must be a list, not {type(obj).__name__}"))
        return []
    return obj


def join(path: str, child: str) -> str:
    if child.startswith("["):
        return f"{path}{child}"
    return f"{path}.{child}" if path else child


class YamlError(ValueError):
    """Malformed YAML, with the position PyYAML reported."""


# libyaml's parser when available (much faster); the constructors are the Python ones.
class _StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader that refuses duplicate keys, as kube-scheduler's strict decoder does."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            mark = key_node.start_mark
            raise YamlError(
                f"duplicate key {key!r} (line {mark.line + 1}, column {mark.column + 1})"
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def parse_yaml(text: str) -> list[Any]:
    """All documents of ``text`` (empty ones dropped); YamlError says where it broke."""
    try:
        docs = list(yaml.load_all(text, Loader=_StrictLoader))  # noqa: S506 - a SafeLoader
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise YamlError(f"malformed YAML{where}: {err.problem or err.context}") from err
    except yaml.YAMLError as err:
        raise YamlError(f"malformed YAML: {err}") from err
    return [d for d in docs if d is not None]
