"""User regexes (`logs --grep`) run in time linear in the text (issue 22), and mean what
Python's `re` means for everything they accept.

The bound is checked by counting the NFA instructions a search visits (``work``), never by a
clock: at most 2 × len(program) per character, plus the end.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.observe.loglines import Grep, LogLine
from kschedctl.observe.userregex import MAX_PROGRAM, PatternError, UserRegex


def _bound(regex: UserRegex, text: str) -> int:
    return 2 * len(regex) * (len(text) + 1)


def test_the_hostile_grep_of_issue_22_is_linear() -> None:
    """`logs --grep '^(a|aa)+$'` on a 49-character line ran for 40 s (backtracking)."""
    keep = Grep("^(a|aa)+$")
    line = "a" * 48 + "b"
    assert keep(LogLine("p", line)) is False
    assert keep.pattern is not None
    assert keep.pattern.work <= _bound(keep.pattern, line)
    assert keep(LogLine("p", "a" * 49)) is True


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        (r"^(a|aa)+$", False),
        (r"(a*)*b", False),
        (r"(a|a)*c", False),
        (r"(\w+\s?)+$", False),
        (r"^(([a-z])+.)+[A-Z]([a-z])+$", False),
        (r"(.*a){12}", True),
    ],
)
def test_hostile_patterns_visit_a_bounded_number_of_states(pattern: str, found: bool) -> None:
    """Fresh matchers (no cache) on lines of 12 to 10,000 characters: the work stays within
    the bound, which grows with the line, not with the number of ways to match it."""
    for n in (12, 100, 1000, 10_000):
        regex = UserRegex(pattern)
        text = "a" * n + "!"
        assert regex.search(text) is found
        assert regex.work <= _bound(regex, text), (pattern, n)


def test_a_warm_cache_makes_each_character_one_lookup() -> None:
    regex = UserRegex(r"^(a|aa)+$")
    regex.search("a" * 1000 + "b")
    before = regex.work
    regex.search("a" * 100_000 + "b")
    assert regex.work == before  # every step was already known


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (r"(a)\1", "backreferences"),
        (r"(?P<x>a)(?P=x)", "backreferences"),
        (r"(a)?(?(1)b|c)", "group conditionals"),
        (r"(?=a)", "lookahead and lookbehind"),
        (r"(?<!a)b", "lookahead and lookbehind"),
        (r"(?>a+)b", "atomic groups"),
        (r"a++", "possessive repeats"),
        (r"(", "missing ), unterminated subpattern"),
        (r"a{20000}", f"more than {MAX_PROGRAM:,} times"),
        (r"(a{5000}){5000}", "too large"),
        (r"((?:){10000}){10000}", "too large"),
    ],
)
def test_what_needs_backtracking_or_is_too_large_is_refused(pattern: str, message: str) -> None:
    with pytest.raises(PatternError, match=re.escape(message)):
        UserRegex(pattern)
    with pytest.raises(ValueError, match="invalid --grep expression"):
        Grep(pattern)


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("lease|forbidden", "attempting to acquire leader lease", True),
        (r"\bfoo\b", "a foo b", True),
        (r"\bfoo\b", "afoo", False),
        (r"(?a)\bé", "xé", True),  # ASCII: é is not a word character
        (r"\bé", "xé", False),
        (r"a$", "ba\n", True),  # `$` before a final newline
        (r"a$", "ba\n\n", False),
        (r"(?m)^b", "a\nb", True),
        (r"(?i)STRASSE", "strasse", True),
        (r"(?i)k", "\u212a", True),  # the Kelvin sign folds to k
        (r"(?i)[^a]", "A", False),
        (r"\d+", "١٢", True),  # Unicode digits, as re
        (r"(?a)\d", "١", False),
        (r"\B", "a", False),
        (r"x*", "", True),
        (r"(?s)a.b", "a\nb", True),
        (r"a.b", "a\nb", False),
        (r"a{2,3}?c", "aac", True),
    ],
)
def test_the_meaning_is_pythons(pattern: str, text: str, found: bool) -> None:
    assert (re.search(pattern, text) is not None) is found
    assert UserRegex(pattern).search(text) is found


# A small grammar of the syntax UserRegex accepts, over a small alphabet (so that matches are
# frequent), compared with re on short texts (where backtracking is harmless).
_ATOMS = st.sampled_from(
    ["a", "b", ".", r"\w", r"\W", r"\d", r"\s", "[ab]", "[^a]", "[a-c_]", "^", "$", r"\b", r"\B", r"\A", r"\Z", ""]
)  # fmt: skip


def _patterns() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map("|".join),
            inner.map(lambda p: f"({p})"),
            st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{0,2}", "{1,3}?", "*?"])).map(
                lambda t: f"(?:{t[0]}){t[1]}"
            ),
        )

    return st.recursive(_ATOMS, extend, max_leaves=8)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(
    _patterns(),
    st.sampled_from(["", "(?i)", "(?m)", "(?s)", "(?a)", "(?ims)"]),
    st.text(alphabet="abAB_ 1\n\u00e9", max_size=10),
)
def test_same_answer_as_re_within_the_bound(pattern: str, flags: str, text: str) -> None:
    regex = UserRegex(flags + pattern)
    assert regex.search(text) is (re.search(flags + pattern, text) is not None), (pattern, text)
    assert regex.work <= _bound(regex, text)
