"""Label selectors and node-selector terms with apimachinery's exact matching rules.

- :class:`Selector` is ``metav1.LabelSelectorAsSelector``: ``None`` selects nothing, ``{}``
  selects everything, otherwise matchLabels AND matchExpressions (In/NotIn/Exists/DoesNotExist).
- :class:`NodeSelectorTerm` is one required node-affinity term: matchExpressions (also Gt/Lt)
  AND matchFields (only ``metadata.name``, In/NotIn, exactly one value).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "SelectorError",
    "Requirement",
    "Selector",
    "NodeSelectorTerm",
    "parse_go_int",
    "label_selector",
    "node_selector_term",
]

_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class SelectorError(ValueError):
    """A selector the API would not accept (the scheduler treats it as a parse error)."""


def parse_go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``; None where Go returns an error."""
    if not _GO_INT.fullmatch(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


@dataclass(frozen=True)
class Requirement:
    """One requirement: ``key op values``. ``op`` is the API spelling (In, NotIn, Gt ...)."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            if self.key not in labels or len(self.values) != 1:
                return False
            have = parse_go_int(labels[self.key])
            want = parse_go_int(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == "Gt" else have < want
        return False

    def describe(self) -> str:
        if self.op in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.op}"
        if self.op in ("Gt", "Lt"):
            return f"{self.key} {self.op} {self.values[0] if self.values else ''}".rstrip()
        return f"{self.key} {self.op} [{', '.join(self.values)}]"


@dataclass(frozen=True)
class Selector:
    """A parsed label selector. ``nothing`` selects no object; no requirements selects all."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def empty(self) -> bool:
        """``labels.Selector.Empty()``: true only for the select-everything selector."""
        return not self.nothing and not self.requirements

    def with_labels(self, extra: Mapping[str, str]) -> Selector:
        """Merge ``key In [value]`` requirements in front (matchLabelKeys handling)."""
        if self.nothing:
            return self
        added = tuple(Requirement(k, "In", (v,)) for k, v in sorted(extra.items()))
        return Selector(added + self.requirements)

    def describe(self) -> str:
        if self.nothing:
            return "<nothing>"
        if not self.requirements:
            return "<everything>"
        parts = []
        for r in self.requirements:
            if r.op == "In" and len(r.values) == 1:
                parts.append(f"{r.key}={r.values[0]}")
            else:
                parts.append(r.describe())
        return ",".join(parts)


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def _values(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SelectorError(f"values must be a list, got {raw!r}")
    return tuple(str(v) for v in raw)


def label_selector(raw: Mapping[str, Any] | None) -> Selector:
    """``metav1.LabelSelectorAsSelector`` for a LabelSelector dict (or None)."""
    if raw is None:
        return NOTHING
    match_labels = raw.get("matchLabels") or {}
    exprs = raw.get("matchExpressions") or []
    if not match_labels and not exprs:
        return EVERYTHING
    reqs: list[Requirement] = []
    for k, v in match_labels.items():
        reqs.append(Requirement(str(k), "In", (str(v),)))
    for e in exprs:
        op = e.get("operator", "")
        vals = _values(e.get("values"))
        if op in ("In", "NotIn"):
            if not vals:
                raise SelectorError(f"{e.get('key')}: values set can't be empty for {op}")
        elif op in ("Exists", "DoesNotExist"):
            if vals:
                raise SelectorError(f"{e.get('key')}: values set must be empty for {op}")
        else:
            raise SelectorError(f"{op!r} is not a valid label selector operator")
        reqs.append(Requirement(str(e.get("key", "")), op, vals))
    # labels.Selector sorts its requirements by key; matching is order-independent anyway.
    reqs.sort(key=lambda r: r.key)
    return Selector(tuple(reqs))


@dataclass(frozen=True)
class NodeSelectorTerm:
    """One parsed ``nodeSelectorTerms[i]`` (never empty: empty terms are dropped)."""

    index: int
    expressions: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()
    error: str | None = None  # parse error: the term never matches
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return self.first_failure(labels, node_name) is None

    def first_failure(self, labels: Mapping[str, str], node_name: str) -> str | None:
        """None when the term matches, else a short description of what failed."""
        if self.error is not None:
            return f"term {self.index} is invalid ({self.error})"
        for r in self.expressions:
            if not r.matches(labels):
                return _explain(r, labels)
        # Go skips matchFields when the node has no name (no fields to match).
        if self.fields and node_name:
            fields = {"metadata.name": node_name}
            for r in self.fields:
                have = fields.get(r.key, "")
                ok = have == r.values[0] if r.op == "In" else have != r.values[0]
                if not ok:
                    return f"matchFields {r.key} {r.op} [{r.values[0]}] (node is {node_name})"
        return None


def _explain(r: Requirement, labels: Mapping[str, str]) -> str:
    if r.key in labels:
        return f"{r.describe()} (node has {r.key}={labels[r.key]})"
    return f"{r.describe()} (node has no label {r.key})"


def node_selector_term(index: int, raw: Mapping[str, Any]) -> NodeSelectorTerm | None:
    """Parse one NodeSelectorTerm; None for an empty term (which matches nothing)."""
    exprs_raw = raw.get("matchExpressions") or []
    fields_raw = raw.get("matchFields") or []
    if not exprs_raw and not fields_raw:
        return None
    errors: list[str] = []
    exprs: list[Requirement] = []
    for e in exprs_raw:
        op = e.get("operator", "")
        key = str(e.get("key", ""))
        try:
            vals = _values(e.get("values"))
        except SelectorError as err:
            errors.append(str(err))
            continue
        if op in ("In", "NotIn") and not vals:
            errors.append(f"{key}: values set can't be empty for {op}")
        elif op in ("Exists", "DoesNotExist") and vals:
            errors.append(f"{key}: values set must be empty for {op}")
        elif op in ("Gt", "Lt") and (len(vals) != 1 or parse_go_int(vals[0]) is None):
            errors.append(f"{key}: {op} needs exactly one integer value")
        elif op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            errors.append(f"{key}: unsupported operator {op!r}")
        else:
            exprs.append(Requirement(key, op, vals))
    fields: list[Requirement] = []
    for f in fields_raw:
        op = f.get("operator", "")
        key = str(f.get("key", ""))
        vals = _values(f.get("values"))
        if op not in ("In", "NotIn"):
            errors.append(f"matchFields {key}: unsupported operator {op!r}")
        elif len(vals) != 1:
            errors.append(f"matchFields {key}: must have one element")
        else:
            fields.append(Requirement(key, op, vals))
    return NodeSelectorTerm(
        index=index,
        expressions=tuple(exprs),
        fields=tuple(fields),
        error="; ".join(errors) if errors else None,
        raw=raw,
    )


def node_selector_terms(raw_terms: Sequence[Mapping[str, Any]]) -> list[NodeSelectorTerm]:
    """Parse ``nodeSelectorTerms``, dropping empty terms like ``NewLazyErrorNodeSelector``."""
    out = []
    for i, t in enumerate(raw_terms):
        parsed = node_selector_term(i, t or {})
        if parsed is not None:
            out.append(parsed)
    return out


# -- the string forms: kubectl's -l and --field-selector ------------------------------------------

# apimachinery/pkg/util/validation: qualified names (label keys) and label values.
_NAME_PART = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_QUALIFIED = re.compile(rf"^(?:({_DNS_SUBDOMAIN})/)?({_NAME_PART})$")
_LABEL_VALUE = re.compile(rf"^(?:{_NAME_PART})?$")
# labels/selector.go's lexer: these characters end an identifier.
_SPECIAL = set(" \t\r\n,()=!<>")


def _check_key(key: str) -> str:
    if not _QUALIFIED.match(key):
        raise SelectorError(
            f"invalid label key {key!r}: a qualified name, [prefix/]name, name at most 63 "
            "characters of alphanumerics, '-', '_' or '.' starting and ending alphanumeric"
        )
    prefix = key.rpartition("/")[0]
    if len(prefix) > 253 or len(key.rpartition("/")[2]) > 63:
        raise SelectorError(f"invalid label key {key!r}: too long")
    return key


def _check_value(value: str) -> str:
    if len(value) > 63 or not _LABEL_VALUE.match(value):
        raise SelectorError(
            f"invalid label value {value!r}: at most 63 characters of alphanumerics, '-', '_' "
            "or '.' starting and ending alphanumeric"
        )
    return value


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, position): identifier, operator, or punctuation, as labels.Lexer reads."""
    tokens: list[tuple[str, str, int]] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in " \t\r\n":
            i += 1
            continue
        if text.startswith(("==", "!="), i):
            tokens.append(("op", text[i : i + 2], i))
            i += 2
        elif ch in "=!<>(),":
            tokens.append(("op", ch, i))
            i += 1
        else:
            start = i
            while i < len(text) and text[i] not in _SPECIAL:
                i += 1
            word = text[start:i]
            kind = "keyword" if word in ("in", "notin") else "id"
            tokens.append((kind, word, start))
    return tokens


def parse_label_selector(text: str) -> Selector:
    """kubectl's ``-l`` syntax (apimachinery ``labels.Parse``): requirements joined by commas:
    ``key``, ``!key``, ``key=value``, ``key==value``, ``key!=value``, ``key in (a,b)``,
    ``key notin (a,b)``, ``key>N``, ``key<N``. ``!=`` and ``notin`` also match objects without
    the key. An empty string selects everything."""
    tokens = _tokens(text)
    pos = 0
    requirements: list[Requirement] = []

    def peek() -> tuple[str, str, int] | None:
        return tokens[pos] if pos < len(tokens) else None

    def fail(message: str) -> SelectorError:
        where = tokens[pos][2] if pos < len(tokens) else len(text)
        return SelectorError(f"{message} at position {where} of {text!r}")

    while pos < len(tokens):
        token = tokens[pos]
        negated = token == ("op", "!", token[2])
        if negated:
            pos += 1
        key_token = peek()
        if key_token is None or key_token[0] != "id":
            raise fail("expected a label key")
        key = _check_key(key_token[1])
        pos += 1
        nxt = peek()
        if negated:
            requirements.append(Requirement(key, "DoesNotExist"))
        elif nxt is None or nxt[1] == ",":
            requirements.append(Requirement(key, "Exists"))
        elif nxt[1] in ("=", "==", "!="):
            pos += 1
            value_token = peek()
            value = ""
            if value_token is not None and value_token[0] in ("id", "keyword"):
                value = value_token[1]
                pos += 1
            op = "NotIn" if nxt[1] == "!=" else "In"
            requirements.append(Requirement(key, op, (_check_value(value),)))
        elif nxt[1] in ("in", "notin"):
            pos += 1
            if peek() is None or tokens[pos][1] != "(":
                raise fail(f"expected '(' after {nxt[1]}")
            pos += 1
            values: list[str] = []
            expect_value = True
            while True:
                current = peek()
                if current is None:
                    raise fail("expected ')'")
                if current[1] == ")":
                    if expect_value and values:
                        values.append("")
                    pos += 1
                    break
                if current[1] == ",":
                    if expect_value:
                        values.append("")
                    expect_value = True
                    pos += 1
                    continue
                if current[0] == "op" or not expect_value:
                    raise fail(f"unexpected {current[1]!r} in the value list")
                values.append(_check_value(current[1]))
                expect_value = False
                pos += 1
            if not values:
                raise fail(f"{nxt[1]} needs at least one value")
            op = "In" if nxt[1] == "in" else "NotIn"
            requirements.append(Requirement(key, op, tuple(sorted(set(values)))))
        elif nxt[1] in ("<", ">"):
            pos += 1
            value_token = peek()
            if value_token is None or parse_go_int(value_token[1]) is None:
                raise fail(f"{nxt[1]} needs an integer value")
            pos += 1
            requirements.append(Requirement(key, "Gt" if nxt[1] == ">" else "Lt",
                                            (value_token[1],)))  # fmt: skip
        else:
            raise fail(f"unexpected {nxt[1]!r} after key {key!r}")
        if pos < len(tokens):
            if tokens[pos][1] != ",":
                raise fail(f"expected ',' not {tokens[pos][1]!r}")
            pos += 1
            if pos == len(tokens):
                raise fail("expected a requirement after ','")
    return Selector(tuple(requirements))


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    value: str
    equal: bool  # = and ==, or !=

    def matches(self, fields: Mapping[str, str]) -> bool:
        return (fields.get(self.field) == self.value) == self.equal


def parse_field_selector(text: str) -> tuple[FieldRequirement, ...]:
    """kubectl's ``--field-selector`` (apimachinery ``fields.ParseSelector``): ``f=v``,
    ``f==v``, ``f!=v`` joined by commas; ``\\`` escapes ``,``, ``=``, ``!`` and itself."""
    result: list[FieldRequirement] = []
    for part in _split_unescaped(text, ","):
        if part == "":
            continue
        for op in ("!=", "==", "="):
            index = _find_unescaped(part, op)
            if index >= 0:
                key, value = part[:index], part[index + len(op) :]
                if not key:
                    raise SelectorError(f"invalid field selector {part!r}: no field name")
                result.append(FieldRequirement(_unescape(key), _unescape(value), op != "!="))
                break
        else:
            raise SelectorError(
                f"invalid field selector {part!r}: expected field=value, field==value or "
                "field!=value"
            )
    return tuple(result)


def _find_unescaped(text: str, op: str) -> int:
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(op, i):
            return i
        i += 1
    return -1


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, current, i = [], [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if text[i] == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(text[i])
        i += 1
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def match_fields(requirements: Sequence[FieldRequirement], fields: Mapping[str, str]) -> bool:
    """Every requirement holds; a field the object lacks is the empty string's."""
    return all(r.matches(fields) for r in requirements)
