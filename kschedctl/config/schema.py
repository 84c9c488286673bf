"""Strict shape checks for YAML data: unknown fields and wrong types become Problems.

Pure. kube-scheduler decodes its config strictly, and kschedctl specs are loaded the same way,
so a typo is an error that names the field (with a "did you mean") instead of being ignored.
A schema maps a field name to its Python type, a tuple of types, or None (anything).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from kschedctl.errors import Problem, printable, quote

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

    close = difflib.get_close_matches(str(key)[:100], list(allowed), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown field{hint}"


def check_fields(
    obj: Any, schema: Mapping[str, Any], path: str, out: list[Problem]
) -> dict[str, Any]:
    """Report unknown fields and wrong types; return the mapping (empty if it is not one).

    A field of the wrong type is left out of what is returned: it is reported, and what
    reads the result on sees only values of the declared types (a list where a name belongs
    never reaches a set or a comparison).
    """
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        out.append(Problem(path, f"must be a mapping, not {type(obj).__name__}"))
        return {}
    wrong = []
    for key, value in obj.items():
        child = join(path, key)
        if key not in schema:
            out.append(Problem(child, unknown_field_message(key, list(schema))))
        elif not type_ok(value, schema[key]):
            out.append(Problem(child, f"must be {type_name(schema[key])}, not {quote(value)}"))
            wrong.append(key)
    return {k: v for k, v in obj.items() if k not in wrong} if wrong else obj


def check_list(obj: Any, path: str, out: list[Problem]) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        out.append(Problem(path, f"must be a list, not {type(obj).__name__}"))
        return []
    return obj


_PLAIN_KEY = re.compile(r"(?:[A-Za-z0-9_][-A-Za-z0-9_./]{0,252})?(?:\[[0-9]+\])*")


def key_text(key: object) -> str:
    """A user's key as it is if it looks like a field or label name, else quoted."""
    return key if isinstance(key, str) and _PLAIN_KEY.fullmatch(key) else quote(key, 40)


def key_segment(key: object) -> str:
    """A user's mapping key as a field-path segment: as is if it looks like a field or label
    name, else bracketed and quoted (``args['a\\nb']``), so no key can forge a path or a line."""
    text = key_text(key)
    return text if text is key else f"[{text}]"


def join(path: str, child: object) -> str:
    """``path.child``, ``path[0]``; a child that is not a plain name is quoted (key_segment)."""
    child = key_segment(child)
    if child.startswith("["):
        return f"{path}{child}"
    return f"{path}.{child}" if path else child


class YamlError(ValueError):
    """Malformed or hostile YAML, with the position PyYAML reported."""


# Bounds on what a document may cost to load (README "Security"). Anchors and aliases are
# allowed (kube-scheduler's decoder takes them) but may add at most MAX_ALIAS_NODES nodes to
# the whole stream: a 442-byte "billion laughs" is refused before anything is built.
MAX_ALIAS_NODES = 100_000
MAX_DEPTH = 100  # nesting levels; a spec is about 10 deep, a CRD schema a few dozen
INT64 = (-(2**63), 2**63 - 1)

_MERGE_TAG = "tag:yaml.org,2002:merge"
_NOT_JSON_TAGS = ("binary", "set", "omap", "pairs")  # no JSON equivalent: Kubernetes has none


def _at(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"


# libyaml's parser when available (much faster); the constructors are the Python ones.
class _StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader for Kubernetes' data model, bounded.

    Refuses duplicate keys (as kube-scheduler's strict decoder does), keys that are not
    strings, integers outside int64, tags without a JSON equivalent, alias expansions past
    MAX_ALIAS_NODES, recursive aliases and nesting deeper than MAX_DEPTH. Dates stay strings,
    as they do in Kubernetes (YAML is converted to JSON there).
    """

    # Without the timestamp resolver, 2001-12-14 is the string it is in Kubernetes.
    yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    _budget = MAX_ALIAS_NODES  # nodes aliases may still add, over the whole stream

    def construct_document(self, node: yaml.Node) -> Any:
        self._budget = _walk(node, self._budget)
        return super().construct_document(node)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, OverflowError) as err:
            if isinstance(err, YamlError):
                raise
            raise YamlError(f"invalid value ({_at(node.start_mark)}): {quote(str(err))}") from err


def _walk(root: yaml.Node, budget: int) -> int:
    """Walk ``root``'s tree as construction will expand it; return what is left of ``budget``.

    Each node met again through an alias costs one; past the budget (a billion laughs, or an
    alias inside its own anchor) or past MAX_DEPTH, YamlError. Iterative, and it stops at the
    limit, so it costs at most the document's size plus the budget.
    """
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    pop, push, add = stack.pop, stack.append, seen.add
    while stack:
        node, depth = pop()
        if id(node) in seen:
            budget -= 1
            if budget < 0:
                raise YamlError(
                    f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} nodes (or refer to "
                    "themselves): write the values out instead of repeating *aliases"
                )
        else:
            add(id(node))
        if isinstance(node, yaml.ScalarNode):
            continue
        if depth >= MAX_DEPTH:
            raise YamlError(f"nested more than {MAX_DEPTH} levels deep ({_at(node.start_mark)})")
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                push((key, depth + 1))
                push((value, depth + 1))
        else:
            for item in node.value:
                push((item, depth + 1))
    return budget


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> Any:
    # A generator (like PyYAML's own): nested mappings are built without recursion.
    seen: set[str] = set()
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        key = loader.construct_object(key_node) if isinstance(key_node, yaml.ScalarNode) else None
        if not isinstance(key, str):
            shown = f"a {key_node.id}" if not isinstance(key_node, yaml.ScalarNode) else quote(key)
            shown = "null" if key is None and isinstance(key_node, yaml.ScalarNode) else shown
            raise YamlError(
                f"a mapping key must be a string, not {shown} ({_at(key_node.start_mark)}): "
                "quote it"
            )
        if key in seen:
            raise YamlError(f"duplicate key {quote(key)} ({_at(key_node.start_mark)})")
        seen.add(key)
    data: dict[str, Any] = {}
    yield data
    data.update(loader.construct_mapping(node))


def _construct_int(loader: _StrictLoader, node: yaml.ScalarNode) -> int:
    digits = str(node.value).replace("_", "")
    value = None if len(digits) > 70 else loader.construct_yaml_int(node)
    if value is None or not INT64[0] <= value <= INT64[1]:
        raise YamlError(
            f"integer out of range ({_at(node.start_mark)}): {quote(node.value, 24)}; "
            "Kubernetes integers are 64-bit at most"
        )
    return int(value)


def _refuse_tag(loader: _StrictLoader, node: yaml.Node) -> Any:
    raise YamlError(
        f"tag {quote(node.tag.rsplit(':', 1)[-1])} is not supported ({_at(node.start_mark)}): "
        "Kubernetes YAML holds mappings, lists, strings, numbers, booleans and null"
    )


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)
for _tag in _NOT_JSON_TAGS:
    _StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse_tag)


def _code(character: str | int) -> str:
    return f"U+{character if isinstance(character, int) else ord(character[:1] or ' '):04X}"


@dataclass
class AliasBudget:
    """Nodes aliases may still add; share one between parses of the same file (YAML inside
    YAML, as in a ConfigMap) so that nesting cannot multiply the limit."""

    nodes: int = MAX_ALIAS_NODES


def parse_yaml(text: str, budget: AliasBudget | None = None) -> list[Any]:
    """All documents of ``text`` (empty ones dropped); YamlError says where it broke."""
    budget = budget or AliasBudget()
    loader = _StrictLoader(text)
    loader._budget = budget.nodes
    docs: list[Any] = []
    try:
        while loader.check_data():
            docs.append(loader.get_data())
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" ({_at(mark)})" if mark else ""
        raise YamlError(f"malformed YAML{where}: {err.problem or err.context}") from err
    except yaml.reader.ReaderError as err:
        raise YamlError(
            f"not YAML text: character {_code(err.character)} at offset {err.position} "
            "(control characters are not allowed)"
        ) from err
    except yaml.YAMLError as err:
        raise YamlError(f"malformed YAML: {printable(str(err), 300)}") from err
    except RecursionError as err:  # the pure-Python parser nests by recursion
        raise YamlError(f"nested more than {MAX_DEPTH} levels deep") from err
    finally:
        budget.nodes = loader._budget
        loader.dispose()
    return [d for d in docs if d is not None]
