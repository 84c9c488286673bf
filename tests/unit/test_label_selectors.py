"""kubectl's -l and --field-selector strings: one parser, one matcher (apimachinery's rules)."""

from __future__ import annotations

import re

import pytest

from kschedctl.model.filters.selectors import (
    SelectorError,
    match_fields,
    parse_field_selector,
    parse_label_selector,
)

LABELS = {"app": "web", "tier": "frontend", "kubernetes.io/os": "linux", "gen": "3"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("app!=web", False),
        ("missing!=x", True),  # != matches objects without the key
        ("app in (web, db)", True),
        ("app in (db)", False),
        ("app notin (db,cache)", True),
        ("missing notin (a)", True),
        ("app notin (web)", False),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=web,tier=frontend", True),
        ("app=web,tier=backend", False),
        ("kubernetes.io/os=linux", True),
        ("gen>2", True),
        ("gen<3", False),
        ("missing=", False),
        (" app = web , ! missing ", True),
    ],
)
def test_label_selector_matches_as_kubectl(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is matches


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("=web", "expected a label key"),
        ("app in web", "expected '('"),
        ("app in (", "expected ')'"),
        ("app in ()", "needs at least one value"),
        ("app,", "expected a requirement after ','"),
        ("app web", "unexpected 'web'"),
        ("app=web tier=x", "expected ','"),
        ("-app=x", "invalid label key"),
        ("app=-x", "invalid label value"),
        ("gen>x", "needs an integer"),
        ("a" * 64 + "=x", "invalid label key"),
    ],
)
def test_bad_label_selectors(selector: str, message: str) -> None:
    with pytest.raises(SelectorError, match=re.escape(message)):
        parse_label_selector(selector)


FIELDS = {"metadata.name": "s1", "metadata.namespace": "kube-system", "form": "deployment"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("metadata.name=s1", True),
        ("metadata.name==s1", True),
        ("metadata.name!=s1", False),
        ("metadata.name=s1,form=pod", False),
        ("metadata.namespace!=default,form=deployment", True),
        ("", True),
    ],
)
def test_field_selector(selector: str, matches: bool) -> None:
    assert match_fields(parse_field_selector(selector), FIELDS) is matches


def test_field_selector_escapes() -> None:
    (req,) = parse_field_selector(r"a\=b=c\,d")
    assert (req.field, req.value, req.equal) == ("a=b", "c,d", True)


@pytest.mark.parametrize("selector", ["name", "=x"])
def test_bad_field_selectors(selector: str) -> None:
    with pytest.raises(SelectorError):
        parse_field_selector(selector)
