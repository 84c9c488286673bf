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

from kschedctl.base.errors import Problem, printable, quote

_TYPE_NAMES = {bool: "a boolean", int: "an integer", str: "a string", dict: "a mapping"}
_TYPE_NAMES[list] = "a list"
NUMBER = (int, float)
_JSON_KINDS: dict[type, str] = {dict: "object", list: "array"}


@dataclass(frozen=True)
class GoInt:
    """A Go integer field (int32 or int64): an integer within its range, not a boolean."""

    bits: int

    def fits(self, value: int) -> bool:
        return bool(-(2 ** (self.bits - 1)) <= value < 2 ** (self.bits - 1))


GO_INT32 = GoInt(32)
GO_INT64 = GoInt(64)


def type_ok(value: Any, expected: Any) -> bool:
    if value is None or expected is None:
        return True  # null decodes to the zero value in Go
    if isinstance(expected, GoInt):
        return isinstance(value, int) and not isinstance(value, bool) and expected.fits(value)
    types = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool) and bool not in types:
        return False  # YAML true is not a number
    return isinstance(value, types)


def type_name(expected: Any) -> str:
    if isinstance(expected, GoInt):
        return f"an integer (int{expected.bits})"
    if isinstance(expected, tuple):
        return "a number"
    return _TYPE_NAMES.get(expected, str(expected))


def type_message(value: Any, expected: Any) -> str:
    """Why ``value`` does not decode into a field of type ``expected``."""
    if isinstance(expected, GoInt) and isinstance(value, int) and not isinstance(value, bool):
        return (
            f"{quote(value)} does not fit in an int{expected.bits} (kube-scheduler: cannot "
            f"unmarshal number {quote(value)} into Go struct field of type int{expected.bits})"
        )
    if expected is bool:
        # encoding/json's words: the Go field is a bool, the YAML gave a string or a number.
        kind = "string" if isinstance(value, str) else _JSON_KINDS.get(type(value), "number")
        quoted = ""
        if isinstance(value, str) and value in GO_TRUE + GO_FALSE:
            quoted = f"; in YAML, {value} unquoted is {str(value in GO_TRUE).lower()}"
        return (
            f"must be a boolean, not {quote(value)}{quoted} (kube-scheduler: cannot unmarshal "
            f"{kind} into Go struct field of type bool)"
        )
    return f"must be {type_name(expected)}, not {quote(value)}"


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
            out.append(Problem(child, type_message(value, schema[key])))
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
        if key_node.tag == _GO_TAG:
            _go_key(key_node)
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
    if isinstance(loader, _GoScalarLoader):
        _go_merge_keys(loader, node, seen)
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


# How go-yaml v2 (go.yaml.in/yaml/v2 resolve.go, behind sigs.k8s.io/yaml: what kube-scheduler
# reads its config with) types a plain scalar. YAML 1.1 like PyYAML, but not the same: y/Y/n/N
# are booleans, 1e3 is a float, 0o17 an octal integer, 1:30 a string (no base 60).
# The boolean spellings, row for row as resolve.go's resolveMapList lists them (v2.4.3, the
# release Kubernetes v1.36 builds with): every one of these, and only these, is a boolean.
GO_TRUE = ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")
GO_FALSE = ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
_GO_MAP = {
    **dict.fromkeys(GO_TRUE, True),
    **dict.fromkeys(GO_FALSE, False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), float("nan")),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), float("inf")),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), float("-inf")),
}
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_BASES = {"x": 16, "o": 8, "b": 2}
_TAG = "tag:yaml.org,2002:"
_UINT64_MAX = 2**64 - 1


def go_scalar(text: str) -> Any:
    """A plain (unquoted) YAML scalar as go-yaml v2 resolves it (its ``resolve``)."""
    if text in _GO_MAP:
        return _GO_MAP[text]
    if text[:1] == ".":
        return float(text) if _GO_FLOAT.fullmatch(text) else text
    if text[:1] not in "+-0123456789" or not text:
        return text
    # strconv.ParseInt(s without "_", 0, 64), then ParseUint, then a YAML-style float.
    plain = text.replace("_", "")
    match = _GO_INT.fullmatch(plain)
    if match:
        sign, body = match.groups()
        prefix = body[1:2].lower() if body[:1] == "0" else ""
        if prefix in _GO_BASES:
            value = int(body[2:], _GO_BASES[prefix])
        elif prefix:
            value = int(body[1:], 8)  # a leading 0: octal, as in Go
        else:
            value = int(body)
        value = -value if sign == "-" else value
        if INT64[0] <= value <= _UINT64_MAX:
            return value
    if _GO_FLOAT.fullmatch(plain):
        return float(plain)
    return text  # a timestamp too: Kubernetes reads dates as strings


_GO_TAG = _TAG + "go"


def _go_key(node: yaml.ScalarNode) -> None:
    """A plain mapping key as sigs.k8s.io/yaml makes it a JSON key (yaml.go
    convertToJSONableObject): 1 is "1", y is "true", 1.0 is "1"; null stays null (refused)."""
    value = go_scalar(str(node.value))
    if value is None:
        return
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float):
        text = {"inf": ".inf", "-inf": "-.inf", "nan": ".nan"}.get(str(value), f"{value:.8g}")
    else:
        text = str(value)
    node.tag, node.value = _TAG + "str", text


class _GoScalarLoader(_StrictLoader):
    """The strict loader with go-yaml v2's plain scalars (:func:`go_scalar`)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode and implicit[0] and value != "<<":
            return _GO_TAG
        return str(super().resolve(kind, value, implicit))

    def construct_go_scalar(self, node: yaml.ScalarNode) -> Any:
        value = go_scalar(str(node.value))
        if isinstance(value, int) and not isinstance(value, bool) and value > INT64[1]:
            raise YamlError(
                f"integer out of range ({_at(node.start_mark)}): {quote(node.value, 24)}; "
                "Kubernetes integers are 64-bit at most"
            )
        return value


_GoScalarLoader.add_constructor(_GO_TAG, _GoScalarLoader.construct_go_scalar)


def _go_merge_keys(loader: _StrictLoader, node: yaml.MappingNode, explicit: set[str]) -> None:
    """go-yaml v2's strict mode (decode.go setMapIndex) refuses a key set twice in one map,
    merges included: a ``<<`` key that an explicit key, or another merged mapping, sets too
    ("key ... already set in map"). PyYAML would let the explicit key win."""
    seen = set(explicit)
    for key_node, value_node in node.value:
        if key_node.tag != _MERGE_TAG:
            continue
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for source in sources:
            for key in _mapping_keys(loader, source):
                if key in seen:
                    raise YamlError(
                        f"key {quote(key)} already set in map ({_at(key_node.start_mark)}): "
                        "kube-scheduler's strict YAML reader refuses a key that a '<<' merge "
                        "sets too; write each key once"
                    )
                seen.add(key)


def _mapping_keys(loader: _StrictLoader, node: yaml.Node) -> list[str]:
    """The string keys a merged mapping node contributes (its own merges included)."""
    if not isinstance(node, yaml.MappingNode):
        return []  # PyYAML's flatten_mapping reports what cannot be merged
    keys: list[str] = []
    for key_node, value_node in node.value:
        if key_node.tag == _MERGE_TAG:
            sources = (
                value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            )
            for source in sources:
                keys += _mapping_keys(loader, source)
        elif isinstance(key_node, yaml.ScalarNode):
            if key_node.tag == _GO_TAG:
                _go_key(key_node)
            key = loader.construct_object(key_node)
            if isinstance(key, str):
                keys.append(key)
    return keys


def _code(character: str | int) -> str:
    return f"U+{character if isinstance(character, int) else ord(character[:1] or ' '):04X}"


@dataclass
class AliasBudget:
    """Nodes aliases may still add; share one between parses of the same file (YAML inside
    YAML, as in a ConfigMap) so that nesting cannot multiply the limit."""

    nodes: int = MAX_ALIAS_NODES


def parse_yaml(
    text: str, budget: AliasBudget | None = None, *, go_yaml: bool = False, first_only: bool = False
) -> list[Any]:
    """All documents of ``text`` (empty ones dropped); YamlError says where it broke.

    ``go_yaml``: plain scalars typed as go-yaml v2 types them (:func:`go_scalar`), for files
    a Kubernetes component reads. ``first_only``: the first document only, as
    ``yaml.Unmarshal`` reads it (what follows is not even parsed); empty, it is kept (None).
    """
    budget = budget or AliasBudget()
    loader = (_GoScalarLoader if go_yaml else _StrictLoader)(text)
    loader._budget = budget.nodes
    docs: list[Any] = []
    try:
        if first_only:
            return [loader.get_data() if loader.check_data() else None]
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
