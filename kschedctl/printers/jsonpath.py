"""kubectl's JSONPath template dialect (``-o jsonpath=…``, custom-columns expressions).

A port of k8s.io/client-go/util/jsonpath (parser.go, jsonpath.go, v0.36.3) working on plain
JSON data (dicts, lists, str, int, float, bool, None): text outside ``{…}`` is printed as is;
inside, ``$``/``@`` (the current object), ``.field`` (``\\.`` escapes a dot in a key),
``['key']``, ``[i]``, ``[start:end:step]``, ``[*]``, unions ``[a,b]``, ``..`` (recursive
descent), ``*``, filters ``[?(@.x=="y")]`` (``== != < > <= >=``, or existence),
quoted strings with Go escapes (``{"\\t"}``), and ``{range …}…{end}``.

The parser is :mod:`kschedctl.printers.jsonpath_parser`; this module evaluates and
prints. No maintained PyPI library implements this dialect (jsonpath-ng has no range/end and no
text templates), hence this module. Errors are :class:`JSONPathError` with the position.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kschedctl.printers.jsonpath_parser import (
    Action,
    Field,
    FilterExpression,
    Identifier,
    JSONPathError,
    Literal,
    Node,
    Parser,
    Recursive,
    Slice,
    Text,
    Union_,
    Wildcard,
)

__all__ = ["JSONPathError", "Template", "parse", "go_text", "go_json"]


# -- evaluation -------------------------------------------------------------------------------


@dataclass
class _Range:
    over: Action
    body: list[Any] = field(default_factory=list)  # Text | Action | _Range


def _structure(parts: Sequence[Text | Action]) -> list[Any]:
    """Nest ``{range X}…{end}`` into :class:`_Range` blocks (an unclosed range runs to the end,
    as in client-go; a stray ``{end}`` fails when evaluated)."""
    root: list[Any] = []
    stack: list[list[Any]] = [root]
    for part in parts:
        if isinstance(part, tuple) and part and part[0] == Identifier("range"):
            block = _Range(part[1:])
            stack[-1].append(block)
            stack.append(block.body)
        elif isinstance(part, tuple) and part and part[0] == Identifier("end"):
            if len(stack) == 1:
                raise JSONPathError("not in range, nothing to end")
            stack.pop()
        else:
            stack[-1].append(part)
    return root


class Template:
    """A parsed template: :meth:`execute` gives the text kubectl prints for ``data``."""

    def __init__(self, text: str, *, allow_missing_keys: bool = True) -> None:
        self.source = text
        self.allow_missing_keys = allow_missing_keys
        self._parts = Parser(text).template()
        self._tree: list[Any] | None = None

    def _blocks(self) -> list[Any]:
        if self._tree is None:
            self._tree = _structure(self._parts)
        return self._tree

    def find(self, data: Any) -> list[list[Any]]:
        """The results of each action (client-go's ``FindResults``), ranges flattened."""
        found: list[list[Any]] = []
        self._run(self._blocks(), data, found)
        return found

    def execute(self, data: Any) -> str:
        return "".join(_print(results) for results in self.find(data))

    def execute_json(self, data: Any) -> str:
        """``-o jsonpath-as-json``: every result as one indented JSON array per action."""
        return "".join(
            go_json([v for v in results], indent=True) + "\n" for results in self.find(data)
        )

    def _run(self, blocks: Sequence[Any], data: Any, found: list[list[Any]]) -> None:
        for block in blocks:
            if isinstance(block, Text):
                found.append([block.text])
            elif isinstance(block, _Range):
                for item in self._walk_list([data], block.over):
                    self._run(block.body, item, found)
            else:
                found.append(self._walk_list([data], block))

    def _walk_list(self, values: list[Any], nodes: Sequence[Node]) -> list[Any]:
        for node in nodes:
            values = self._walk(values, node)
        return values

    def _walk(self, values: list[Any], node: Node) -> list[Any]:
        if isinstance(node, Text):
            return [node.text]
        if isinstance(node, Literal):
            return [node.value for _ in values]
        if isinstance(node, Field):
            return self._field(values, node.name)
        if isinstance(node, Slice):
            return _slice(values, node)
        if isinstance(node, Wildcard):
            return [child for v in values for child in _children(v)]
        if isinstance(node, Recursive):
            return _recursive(values)
        if isinstance(node, Union_):
            return [r for branch in node.branches for r in self._walk_list(values, branch)]
        if isinstance(node, FilterExpression):
            return self._filter(values, node)
        if node.name == "end":
            raise JSONPathError("not in range, nothing to end")
        raise JSONPathError(f"unrecognized identifier {node.name}")

    def _field(self, values: list[Any], name: str) -> list[Any]:
        if not values:
            return []
        results = [v[name] for v in values if isinstance(v, dict) and name in v]
        if not results and not self.allow_missing_keys:
            raise JSONPathError(f"{name} is not found")
        return results

    def _filter(self, values: list[Any], node: FilterExpression) -> list[Any]:
        results = []
        for value in values:
            if not isinstance(value, list):
                raise JSONPathError(
                    f"{go_text(value)} is not array or slice and cannot be filtered"
                )
            for item in value:
                if node.operator == "exists":
                    try:
                        if self._walk_list([item], node.left):
                            results.append(item)
                    except JSONPathError:
                        pass  # client-go ignores the error of an existence test
                    continue
                lefts = self._walk_list([item], node.left)
                if not lefts:
                    continue
                if len(lefts) > 1:
                    raise JSONPathError("can only compare one element at a time")
                rights = self._walk_list([item], node.right)
                if not rights:
                    continue
                if len(rights) > 1:
                    raise JSONPathError("can only compare one element at a time")
                if _compare(lefts[0], rights[0], node.operator):
                    results.append(item)
        return results


def parse(text: str, *, allow_missing_keys: bool = True) -> Template:
    """Parse a template; kubectl's ``-o jsonpath`` allows missing keys (prints nothing)."""
    return Template(text, allow_missing_keys=allow_missing_keys)


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return list(value.encode())  # Go indexes a string's bytes (uint8 values)
    return []


def _recursive(values: list[Any]) -> list[Any]:
    result: list[Any] = []
    for value in values:
        children = _children(value)
        if children:
            result.append(value)
            result.extend(_recursive(children))
    return result


def _slice(values: list[Any], node: Slice) -> list[Any]:
    result: list[Any] = []
    for value in values:
        if value is None:
            continue
        if not isinstance(value, list):
            raise JSONPathError(f"{_go_type(value)} is not array or slice")
        length = len(value)
        start = node.start if node.start is not None else 0
        if start < 0:
            start += length
        end = node.end if node.end is not None else length
        if end < 0 or (end == 0 and node.derived):
            end += length
        if end == start:
            return result  # client-go: zero elements asked, nothing more is evaluated
        if start >= length or start < 0:
            raise JSONPathError(f"array index out of bounds: index {start}, length {length}")
        if end > length or end < 0:
            raise JSONPathError(f"array index out of bounds: index {end - 1}, length {length}")
        if start > end:
            raise JSONPathError(f"starting index {start} is greater than ending index {end}")
        step = 1
        if node.step is not None:
            if node.step <= 0:
                raise JSONPathError("step must be > 0")
            step = node.step
        result.extend(value[start:end:step])
    return result


def _go_type(value: Any) -> str:
    if isinstance(value, dict):
        return "map[string]interface {}"
    return {bool: "bool", int: "int64", float: "float64", str: "string"}.get(
        type(value), type(value).__name__
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _compare(left: Any, right: Any, op: str) -> bool:
    """text/template's eq/ne/lt/… on basic values: numbers with numbers, strings with strings,
    bools only for equality; other pairs are an error."""
    if op not in ("==", "!=", "<", ">", "<=", ">="):
        raise JSONPathError(f"unrecognized filter operator {op}")
    same = (_number(left) and _number(right)) or (
        type(left) is type(right) and isinstance(left, (str, bool))
    )
    if not same:
        if op in ("==", "!=") and (left is None or right is None):
            return (left is right) == (op == "==")
        raise JSONPathError("incompatible types for comparison")
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if isinstance(left, bool):
        raise JSONPathError("invalid type for comparison")
    return bool(
        {"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right}[op]
    )


# -- printing ---------------------------------------------------------------------------------


def _go_float(value: float) -> str:
    """Go's ``%v`` of a float64: shortest digits, exponent form below 1e-4 and from 1e6 on
    (strconv.FormatFloat 'g', -1: "if precision was the shortest possible, use precision 6")."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    # decimal on use: only a float printed by jsonpath needs it (start-up)
    from decimal import Decimal

    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)  # finite: not 'n'/'F'
    exp = len(digit_tuple) + exponent - 1  # decimal exponent of the first digit
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + (f".{digits[1:]}" if digits[1:] else "")
        return f"{minus}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if exp >= 0:
        whole, frac = digits[: exp + 1].ljust(exp + 1, "0"), digits[exp + 1 :]
    else:
        whole, frac = "0", "0" * (-exp - 1) + digits
    return f"{minus}{whole}{f'.{frac}' if frac else ''}"


def go_json(value: Any, *, indent: bool = False) -> str:
    """Go's ``json.Marshal``: map keys sorted, HTML characters escaped, UTF-8 kept."""
    text = json.dumps(
        _integral(value),
        sort_keys=True,
        ensure_ascii=False,
        indent=4 if indent else None,
        separators=(",", ": ") if indent else (",", ":"),
    )
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _integral(value: Any) -> Any:
    """Whole floats as ints: Go's encoder writes 1.0 as 1 (Python's as 1.0)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def go_text(value: Any) -> str:
    """One scalar as client-go prints it (``fmt.Fprint``); maps and lists as compact JSON."""
    if isinstance(value, (dict, list)):
        return go_json(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def _print(results: list[Any]) -> str:
    return " ".join(go_text(v) for v in results)
