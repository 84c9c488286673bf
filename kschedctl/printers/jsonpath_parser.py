"""The parser of kubectl's JSONPath templates (:mod:`kschedctl.printers.jsonpath` evaluates
them): a port of k8s.io/client-go/util/jsonpath/parser.go (v0.36.3). A template parses into
text and actions, an action into the nodes below; a syntax error is a :class:`JSONPathError`
with its position.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


class JSONPathError(ValueError):
    """A template that does not parse (``position`` set), or one that fails on the data."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position

    def __str__(self) -> str:
        return self.message if self.position is None else f"{self.message} at {self.position}"


# -- nodes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Wildcard:
    pass


@dataclass(frozen=True)
class Recursive:
    pass


@dataclass(frozen=True)
class Slice:
    """``[start:end:step]``; ``None`` is an unknown bound. ``derived``: ``[i]``, end = i + 1."""

    start: int | None
    end: int | None
    step: int | None
    derived: bool = False


@dataclass(frozen=True)
class Literal:
    value: int | float | bool


@dataclass(frozen=True)
class Identifier:
    name: str  # range / end (anything else fails when evaluated, as in client-go)


@dataclass(frozen=True)
class Union_:
    branches: tuple[tuple[Node, ...], ...]


@dataclass(frozen=True)
class FilterExpression:
    left: tuple[Node, ...]
    right: tuple[Node, ...]
    operator: str  # "exists" when the filter is a path alone


Node = (
    Text | Field | Wildcard | Recursive | Slice | Literal | Identifier | Union_ | FilterExpression
)

# One action: the nodes between `{` and `}`; a template is text and actions in order.
Action = tuple[Node, ...]


# -- parser -----------------------------------------------------------------------------------

_DICT_KEY = re.compile(r"^'([^']*)'$")
_SLICE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_FILTER = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$", re.DOTALL)
_TERMINATORS = set(" \t\r\n.,[]$@{}")


def _is_alnum(ch: str) -> bool:
    return ch == "_" or ch.isalpha() or ch.isdigit()


class Parser:
    def __init__(self, text: str, offset: int = 0) -> None:
        self.text = text
        self.pos = 0
        self.offset = offset  # where `text` starts in the user's template (for positions)

    def error(self, message: str, at: int | None = None) -> JSONPathError:
        return JSONPathError(message, self.offset + (self.pos if at is None else at))

    def template(self) -> list[Text | Action]:
        parts: list[Text | Action] = []
        text = self.text
        while self.pos < len(text):
            brace = text.find("{", self.pos)
            if brace < 0:
                parts.append(Text(text[self.pos :]))
                break
            if brace > self.pos:
                parts.append(Text(text[self.pos : brace]))
            self.pos = brace + 1
            parts.append(tuple(self.action()))
        return parts

    def action(self) -> list[Node]:
        """Nodes up to the closing ``}`` (consumed)."""
        nodes: list[Node] = []
        text = self.text
        while True:
            rest = text[self.pos :]
            if rest.startswith("}"):
                self.pos += 1
                return nodes
            if rest.startswith("[?("):
                nodes.append(self.filter())
                continue
            if rest.startswith(".."):
                if nodes and isinstance(nodes[-1], Recursive):
                    raise self.error("invalid multiple recursive descent")
                self.pos += 2
                nodes.append(Recursive())
                if self.pos < len(text) and _is_alnum(text[self.pos]):
                    nodes.append(self.field())
                continue
            if not rest or rest[0] in "\r\n":
                raise self.error("unclosed action")
            ch = rest[0]
            if ch in " @$":
                self.pos += 1
            elif ch == "[":
                nodes.extend(self.array())
            elif ch in "\"'":
                nodes.append(self.quote(ch))
            elif ch == ".":
                self.pos += 1
                nodes.append(self.field())
            elif ch in "+-" or ch.isdigit():
                nodes.append(self.number())
            elif _is_alnum(ch):
                nodes.append(self.identifier())
            else:
                raise self.error(f"unrecognized character in action: {ch!r}")

    def _word(self) -> str:
        start = self.pos
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == "\\" and self.pos + 1 < len(text):
                self.pos += 2
                continue
            if ch in _TERMINATORS:
                break
            self.pos += 1
        return text[start : self.pos]

    def field(self) -> Node:
        word = self._word()
        return Wildcard() if word == "*" else Field(word.replace("\\", ""))

    def identifier(self) -> Node:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in _TERMINATORS:
            self.pos += 1
        word = self.text[start : self.pos]
        if word in ("true", "false"):
            return Literal(word == "true")
        return Identifier(word)

    def number(self) -> Node:
        start = self.pos
        if self.text[self.pos] in "+-":
            self.pos += 1
        while self.pos < len(self.text) and (
            self.text[self.pos].isdigit() or self.text[self.pos] == "."
        ):
            self.pos += 1
        word = self.text[start : self.pos]
        if re.fullmatch(r"[+-]?\d+", word):
            return Literal(int(word))
        try:
            return Literal(float(word))
        except ValueError:
            raise self.error(f"cannot parse number {word}", start) from None

    def _closing(self, close: str, unterminated: str, *, escapable: bool = False) -> int:
        """Where the ``close`` character after ``self.pos`` is (on the same line; ``escapable``:
        not one after a backslash)."""
        end = self.pos
        while True:
            end += 1
            if end >= len(self.text) or self.text[end] == "\n":
                raise self.error(unterminated, self.pos)
            if self.text[end] == close and not (escapable and self.text[end - 1] == "\\"):
                return end

    def array(self) -> list[Node]:
        start = self.pos
        end = self._closing("]", "unterminated array")
        inner = self.text[start + 1 : end]
        self.pos = end + 1
        if inner == "*":
            inner = ":"
        pieces = inner.split(",")
        if len(pieces) > 1:
            branches = []
            for piece in pieces:
                sub = Parser(f"[{piece.strip(' ')}]}}", self.offset + start)
                branches.append(tuple(sub.action()))
            return [Union_(tuple(branches))]
        key = _DICT_KEY.match(inner)
        if key:
            # client-go re-parses the key as `.key`: ['a.b'] is .a.b
            return Parser(f".{key.group(1)}}}", self.offset + start + 1).action()
        bounds = _SLICE.match(inner)
        if bounds is None:
            raise self.error(f"invalid array index {inner}", start)
        first, second, third = bounds.groups()
        start_v = int(first) if first not in ("", "-") else None
        if first == "-":
            raise self.error("array index - is not a number", start)
        if second is None:
            return [Slice(start_v, (start_v or 0) + 1, None, derived=True)]
        end_v = _bound(second[1:], self.error)
        step_v = _bound(third[1:], self.error) if third is not None else None
        return [Slice(start_v, end_v, step_v)]

    def filter(self) -> Node:
        start = self.pos
        self.pos += 3
        begin = end = False
        pair = ""
        text = self.text
        while True:
            if self.pos >= len(text) or text[self.pos] == "\n":
                raise self.error("unterminated filter", start)
            ch = text[self.pos]
            self.pos += 1
            if ch in "\"'":
                if not begin:
                    begin, pair = True, ch
                    continue
                if text[self.pos - 2] != "\\" and ch == pair:
                    end = True
            elif ch == ")" and begin == end:
                break
        if self.pos >= len(text) or text[self.pos] != "]":
            raise self.error("unclosed array expect ]")
        self.pos += 1
        body = text[start + 3 : self.pos - 2]
        found = _FILTER.match(body)
        if found is None:
            left = Parser(body + "}", self.offset + start + 3).action()
            return FilterExpression(tuple(left), (), "exists")
        left = Parser(found.group(1) + "}", self.offset + start + 3).action()
        right_at = self.offset + start + 3 + found.start(3)
        right = Parser(found.group(3) + "}", right_at).action()
        return FilterExpression(tuple(left), tuple(right), found.group(2))

    def quote(self, quote: str) -> Node:
        start = self.pos
        end = self._closing(quote, "unterminated quoted string", escapable=True)
        self.pos = end + 1
        return Text(_unquote(self.text[start + 1 : end], quote, lambda m: self.error(m, start)))


def _bound(word: str, error: Callable[[str], JSONPathError]) -> int | None:
    if word == "":
        return None
    try:
        return int(word)
    except ValueError:
        raise error(f"array index {word} is not a number") from None


_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
}


def _unquote(body: str, quote: str, error: Callable[[str], JSONPathError]) -> str:
    """Go's ``strconv.UnquoteChar`` loop (client-go's UnquoteExtend) for one quoted string."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(body):
            raise error("invalid syntax in quoted string")
        esc = body[i + 1]
        if esc in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[esc])
            i += 2
        elif esc == quote:
            out.append(quote)
            i += 2
        elif esc in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[esc]
            digits = body[i + 2 : i + 2 + size]
            if len(digits) != size or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise error("invalid syntax in quoted string")
            out.append(chr(int(digits, 16)))
            i += 2 + size
        elif esc in "01234567":
            digits = body[i + 1 : i + 4]
            if not re.fullmatch(r"[0-7]{3}", digits) or int(digits, 8) > 255:
                raise error("invalid syntax in quoted string")
            out.append(chr(int(digits, 8)))
            i += 4
        else:
            raise error(f"invalid escape \\{esc} in quoted string")
    return "".join(out)
