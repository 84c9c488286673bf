"""Regular expressions typed by a user (``logs --grep``), matched in time linear in the text.

Pure. Python's ``re`` backtracks: ``^(a|aa)+$`` on a line of 49 ``a``s and a ``b`` tries every
way to split the line (tens of seconds; a few more characters, hours), and ``re`` has no
timeout. Running ``re`` in a subprocess with a time budget would bound the time but cost a
process hop per line and still burn the budget on every hostile line of a ``logs -f``.
So a user's pattern is parsed by Python's own parser (the syntax and the error messages users
know) and run on a Thompson NFA instead, simulated as a lazily built DFA (the approach of
RE2 and Go's regexp): each step of a line looks up (state, character) in a cache, and a state
missing from it is computed from at most :data:`MAX_PROGRAM` NFA instructions. A search
therefore visits at most ``2 × len(program) × (len(text) + 1)`` instructions, whatever the
pattern, and a cached step costs one dictionary lookup, so following logs stays fast.

What backtracking alone can do is refused with a usage error: backreferences, conditionals on
groups, lookahead and lookbehind, atomic groups and possessive repeats. Everything else of
Python's syntax means what it means in ``re`` (flags, classes, ``\\b``, ``{m,n}``, lazy
repeats: a search only asks whether a line matches); case-insensitive matching compares a
character and its ``str.lower``/``str.upper`` forms.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from typing import Any

MAX_PROGRAM = 10_000  # NFA instructions of one pattern (``a{20000}`` is refused)
_MAX_STATES = 2_000  # cached DFA states before the cache starts again
_MAX_PARSE_STEPS = 100_000  # nodes visited while compiling (``((){100}){100}`` …)


def _sre() -> tuple[Any, Any]:
    """Python's regex parser and its constants (``re._parser`` from 3.11, ``sre_parse``
    before)."""
    try:
        return importlib.import_module("re._parser"), importlib.import_module("re._constants")
    except ModuleNotFoundError:  # Python 3.10
        return importlib.import_module("sre_parse"), importlib.import_module("sre_constants")


def _name(constant: Any) -> str:
    """An opcode's name (``re._constants``' named integers)."""
    return str(getattr(constant, "name", constant))


class PatternError(ValueError):
    """A pattern that is not valid, or that needs backtracking (the message says which)."""


# Instructions: (opcode, argument).
_CHAR, _SPLIT, _JMP, _ASSERT, _MATCH = range(5)
# Assertions, resolved with the flags at compile time.
_BEGIN_STRING, _BEGIN_LINE, _END_STRING, _END, _END_LINE = range(5)
_BOUNDARY, _NON_BOUNDARY, _ASCII_BOUNDARY, _ASCII_NON_BOUNDARY = range(5, 9)
# What a state remembers of the character before it (only what the assertions ask).
_START, _AFTER_NL, _AFTER_WORD, _AFTER_ASCII_WORD = 1, 2, 4, 8

Pred = Callable[[str], bool]
# `\B` matches the empty string from Python 3.14 on, not before: as the running `re` does.
_NON_BOUNDARY_IN_EMPTY = re.search(r"\B", "") is not None
_MISSING: Any = object()  # not in a state's cache (None there means a match)


def _ascii_word(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


_CATEGORIES: dict[str, tuple[Pred, Pred]] = {  # name: (unicode, ASCII)
    "CATEGORY_DIGIT": (str.isdecimal, lambda c: "0" <= c <= "9"),
    "CATEGORY_SPACE": (str.isspace, lambda c: c in " \t\n\r\f\v"),
    "CATEGORY_WORD": (_word, _ascii_word),
}


class _Compiler:
    def __init__(self) -> None:
        self.parser, self.sre = _sre()
        self.program: list[tuple[int, Any]] = []
        self.steps = 0
        self.flags = self.sre.SRE_FLAG_IGNORECASE, self.sre.SRE_FLAG_ASCII

    def emit(self, op: int, arg: Any = None) -> int:
        if len(self.program) >= MAX_PROGRAM:
            raise PatternError(f"the pattern is too large (more than {MAX_PROGRAM:,} states)")
        self.program.append((op, arg))
        return len(self.program) - 1

    def patch(self, pc: int, arg: Any) -> None:
        self.program[pc] = (self.program[pc][0], arg)

    def seq(self, items: Sequence[tuple[Any, Any]], flags: int) -> None:
        for op, av in items:
            self.charge()
            self.node(_name(op), av, flags)

    def charge(self) -> None:
        """Count one step of compiling: empty groups repeated emit nothing, yet take time."""
        self.steps += 1
        if self.steps > _MAX_PARSE_STEPS:
            raise PatternError("the pattern is too large (repeats nested too deep)")

    def node(self, op: str, av: Any, flags: int) -> None:  # noqa: C901 (one case per opcode)
        sre = self.sre
        if op == "LITERAL":
            self.emit(_CHAR, self.literal(chr(av), flags))
        elif op == "NOT_LITERAL":
            same = self.literal(chr(av), flags)
            self.emit(_CHAR, lambda c: not same(c))
        elif op == "ANY":
            self.emit(_CHAR, (lambda c: True) if flags & sre.SRE_FLAG_DOTALL else "\n".__ne__)
        elif op == "IN":
            self.emit(_CHAR, self.char_class(av, flags))
        elif op == "AT":
            self.emit(_ASSERT, self.at(_name(av), flags))
        elif op == "BRANCH":
            jumps = []
            *firsts, last = av[1]
            for alternative in firsts:
                split = self.emit(_SPLIT)
                self.seq(alternative, flags)
                jumps.append(self.emit(_JMP))
                self.patch(split, (split + 1, len(self.program)))
            self.seq(last, flags)
            for jump in jumps:
                self.patch(jump, len(self.program))
        elif op == "SUBPATTERN":
            _group, add, remove, items = av
            self.seq(items, (flags | add) & ~remove)
        elif op in ("MAX_REPEAT", "MIN_REPEAT"):  # greedy or lazy: the same set of matches
            low, high, item = av
            if low > MAX_PROGRAM or (high != sre.MAXREPEAT and high > MAX_PROGRAM):
                raise PatternError(f"the pattern repeats more than {MAX_PROGRAM:,} times")
            for _ in range(low):
                self.charge()
                self.seq(item, flags)
            if high == sre.MAXREPEAT:
                loop = self.emit(_SPLIT)
                self.seq(item, flags)
                self.emit(_JMP, loop)
                self.patch(loop, (loop + 1, len(self.program)))
            else:
                splits = []
                for _ in range(high - low):
                    self.charge()
                    splits.append(self.emit(_SPLIT))
                    self.seq(item, flags)
                for split in splits:
                    self.patch(split, (split + 1, len(self.program)))
        elif op in ("GROUPREF", "GROUPREF_EXISTS"):
            raise PatternError(
                "backreferences and group conditionals are not supported (they need backtracking)"
            )
        elif op in ("ASSERT", "ASSERT_NOT"):
            raise PatternError(
                "lookahead and lookbehind are not supported (they need backtracking)"
            )
        elif op in ("ATOMIC_GROUP", "POSSESSIVE_REPEAT"):
            raise PatternError("atomic groups and possessive repeats are not supported")
        else:
            raise PatternError(f"{op.lower().replace('_', ' ')} is not supported")

    def literal(self, ch: str, flags: int) -> Pred:
        ignore, ascii_only = (flags & f for f in self.flags)
        if not ignore or (ascii_only and not ch.isascii()):
            return ch.__eq__
        folds = frozenset((ch, ch.lower(), ch.upper()))
        if ascii_only:
            return folds.__contains__
        return lambda c: c in folds or c.lower() in folds or c.upper() in folds

    def char_class(self, items: Sequence[tuple[Any, Any]], flags: int) -> Pred:
        ignore, ascii_only = (flags & f for f in self.flags)
        negate = False
        chars: set[str] = set()
        ranges: list[tuple[int, int]] = []
        tests: list[Pred] = []
        for op, av in items:
            name = _name(op)
            if name == "NEGATE":
                negate = True
            elif name == "LITERAL":
                chars.add(chr(av))
            elif name == "RANGE":
                ranges.append(av)
            elif name == "CATEGORY":
                category = _name(av)
                tests.append(self.category(category.replace("_NOT", ""), ascii_only))
                if "_NOT_" in category:
                    tests[-1] = (lambda t: lambda c: not t(c))(tests[-1])
            else:
                raise PatternError(f"{name.lower()} in a character class is not supported")

        def member(c: str) -> bool:
            if len(c) != 1:  # 'ß'.upper() is 'SS'
                return False
            code = ord(c)
            return (
                c in chars
                or any(lo <= code <= hi for lo, hi in ranges)
                or any(test(c) for test in tests)
            )

        if ignore and not ascii_only:
            return lambda c: (member(c) or member(c.lower()) or member(c.upper())) != negate
        if ignore:
            return lambda c: (member(c) or (c.isascii() and member(c.swapcase()))) != negate
        return lambda c: member(c) != negate

    @staticmethod
    def category(name: str, ascii_only: int) -> Pred:
        if name not in _CATEGORIES:
            raise PatternError(f"{name.lower()} is not supported")
        unicode_test, ascii_test = _CATEGORIES[name]
        return ascii_test if ascii_only else unicode_test

    def at(self, kind: str, flags: int) -> int:
        sre = self.sre
        multiline, ascii_only = flags & sre.SRE_FLAG_MULTILINE, flags & sre.SRE_FLAG_ASCII
        if kind == "AT_BEGINNING":
            return _BEGIN_LINE if multiline else _BEGIN_STRING
        if kind == "AT_END":
            return _END_LINE if multiline else _END
        known = {
            "AT_BEGINNING_STRING": _BEGIN_STRING,
            "AT_END_STRING": _END_STRING,
            "AT_BOUNDARY": _ASCII_BOUNDARY if ascii_only else _BOUNDARY,
            "AT_NON_BOUNDARY": _ASCII_NON_BOUNDARY if ascii_only else _NON_BOUNDARY,
        }
        if kind not in known:
            raise PatternError(f"{kind.lower()} is not supported")
        return known[kind]


class _State:
    """A DFA state: the NFA instructions threads wait at, what came before, the next states."""

    __slots__ = ("pcs", "before", "next", "end")

    def __init__(self, pcs: frozenset[int], before: int) -> None:
        self.pcs = pcs
        self.before = before
        self.next: dict[str, _State | None] = {}  # None: a match ends here
        self.end: bool | None = None  # whether a match ends at the end of the text


class UserRegex:
    """A user's pattern, compiled; :meth:`search` says whether a text holds a match.

    PatternError (a ValueError) for an invalid pattern or one that needs backtracking."""

    def __init__(self, pattern: str) -> None:
        parser, sre = _sre()
        try:
            parsed = parser.parse(pattern, 0)
        except (sre.error, ValueError, OverflowError, RecursionError) as err:
            raise PatternError(str(err)) from err
        compiler = _Compiler()
        try:
            compiler.seq(parsed, parsed.state.flags)
        except RecursionError as err:
            raise PatternError("the pattern is too large (groups nested too deep)") from err
        compiler.emit(_MATCH)
        self.pattern = pattern
        self.program = tuple(compiler.program)
        kinds = {arg for op, arg in self.program if op == _ASSERT}
        self._dollar = _END in kinds  # `$` also matches before a final newline
        self._remember = _START
        if _BEGIN_LINE in kinds:
            self._remember |= _AFTER_NL
        if kinds & {_BOUNDARY, _NON_BOUNDARY}:
            self._remember |= _AFTER_WORD
        if kinds & {_ASCII_BOUNDARY, _ASCII_NON_BOUNDARY}:
            self._remember |= _AFTER_ASCII_WORD
        self.work = 0  # NFA instructions visited: at most 2 × len(program) per character
        self._states: dict[tuple[frozenset[int], int], _State] = {}
        self._start = self._state(frozenset((0,)), _START)

    def __len__(self) -> int:
        return len(self.program)

    def search(self, text: str) -> bool:
        """Whether ``text`` holds a match (``re.search(pattern, text) is not None``)."""
        state = self._start
        last = len(text) - 1
        for i, c in enumerate(text):
            step = state.next.get(c, _MISSING)
            if step is _MISSING or (self._dollar and i == last and c == "\n"):
                step = self._step(state, c, final=i == last)
            if step is None:
                return True
            state = step
        if not text:
            return self._matches(self._start.pcs, _START, None, empty=True)
        if state.end is None:
            state.end = self._matches(state.pcs, state.before, None)
        return state.end

    def _state(self, pcs: frozenset[int], before: int) -> _State:
        key = (pcs, before)
        state = self._states.get(key)
        if state is None:
            if len(self._states) >= _MAX_STATES:  # start again: memory stays bounded
                for old in self._states.values():
                    old.next.clear()
                self._states.clear()
            state = self._states[key] = _State(pcs, before)
        return state

    def _step(self, state: _State, c: str, final: bool) -> _State | None:
        """The state after ``c`` (None: a match ended before it), cached unless ``c`` is a
        final newline (which only ``$`` tells apart)."""
        closed = self._close(state.pcs, state.before, c, final and c == "\n")
        if closed is None:
            nxt = None
        else:
            pcs = {0}  # a search: a new thread starts at every position
            for pc in closed:
                self.work += 1
                if self.program[pc][1](c):
                    pcs.add(pc + 1)
            nxt = self._state(frozenset(pcs), self._before(c))
        if not (final and c == "\n" and self._dollar):
            state.next[c] = nxt
        return nxt

    def _before(self, c: str) -> int:
        kind = 0
        if c == "\n":
            kind |= _AFTER_NL
        if _word(c):
            kind |= _AFTER_WORD
        if _ascii_word(c):
            kind |= _AFTER_ASCII_WORD
        return kind & self._remember

    def _matches(
        self, pcs: frozenset[int], before: int, c: str | None, empty: bool = False
    ) -> bool:
        return self._close(pcs, before, c, False, empty) is None

    def _close(
        self, pcs: frozenset[int], before: int, c: str | None, final_nl: bool, empty: bool = False
    ) -> list[int] | None:
        """The character instructions reachable from ``pcs`` between the character before
        (``before``) and ``c`` (None: the end); None if a match is reachable."""
        program = self.program
        seen: set[int] = set()
        stack = sorted(pcs, reverse=True)
        out = []
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            self.work += 1
            op, arg = program[pc]
            if op == _CHAR:
                out.append(pc)
            elif op == _MATCH:
                return None
            elif op == _JMP:
                stack.append(arg)
            elif op == _SPLIT:
                stack.extend(arg)
            elif _holds(arg, before, c, final_nl, empty):
                stack.append(pc + 1)
        return out


def _holds(kind: int, before: int, c: str | None, final_nl: bool, empty: bool) -> bool:
    """Whether an assertion holds between the character before (``before``) and ``c``."""
    if kind == _BEGIN_STRING:
        return bool(before & _START)
    if kind == _BEGIN_LINE:
        return bool(before & (_START | _AFTER_NL))
    if kind == _END_STRING:
        return c is None
    if kind == _END:
        return c is None or final_nl
    if kind == _END_LINE:
        return c is None or c == "\n"
    ascii_only = kind in (_ASCII_BOUNDARY, _ASCII_NON_BOUNDARY)
    word_before = bool(before & (_AFTER_ASCII_WORD if ascii_only else _AFTER_WORD))
    word_after = c is not None and (_ascii_word(c) if ascii_only else _word(c))
    if kind in (_BOUNDARY, _ASCII_BOUNDARY):
        return word_before != word_after
    return (_NON_BOUNDARY_IN_EMPTY or not empty) and word_before == word_after
