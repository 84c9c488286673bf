"""CEL device selectors (model/filters/dracel.py) against the corpus whose expectations the
real kube-scheduler established (tests/corpus/dra-selectors.yaml; the e2e test
test_why_dra.py::test_selector_corpus_against_kube_scheduler re-establishes them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.model.filters.dracel import (
    MAX_LENGTH,
    CelError,
    Unsupported,
    device_matches,
    device_variable,
)

CORPUS = yaml.safe_load((Path(__file__).parents[1] / "corpus" / "dra-selectors.yaml").read_text())
DEVICE = device_variable(CORPUS["device"], CORPUS["device"]["driver"])


def verdict(expression: str) -> str:
    try:
        return "match" if device_matches(expression, DEVICE) else "nomatch"
    except CelError:
        return "error"


def test_the_corpus_is_big_enough() -> None:
    assert len(CORPUS["selectors"]) >= 30
    assert {s["want"] for s in CORPUS["selectors"]} == {"match", "nomatch", "error"}


@pytest.mark.parametrize("entry", CORPUS["selectors"], ids=lambda e: e["expr"][:60])
def test_selector_agrees_with_kube_scheduler(entry: dict[str, Any]) -> None:
    assert verdict(entry["expr"]) == entry["want"]


def test_missing_key_wording_is_cel_gos() -> None:
    with pytest.raises(CelError, match="^no such key: vendor$"):
        device_matches('device.attributes["corpus.example.com"].vendor == "x"', DEVICE)


@pytest.mark.parametrize(
    "expression",
    [
        "x" * (MAX_LENGTH + 1),
        "[1,2].all(a, [1,2].all(b, [1,2].all(c, [1,2].all(d, true))))",
        'cel.bind(d, device.attributes["corpus.example.com"], d.model == "a100")',
        'device.attributes["corpus.example.com"].?model.orValue("") == "a100"',
    ],
    ids=["too-long", "nested-macros", "cel-bind", "optionals"],
)
def test_hostile_or_unsupported_selectors_are_refused_not_guessed(expression: str) -> None:
    with pytest.raises(Unsupported):
        device_matches(expression, DEVICE)


def test_a_compile_error_says_so() -> None:
    with pytest.raises(CelError) as err:
        device_matches("device.driver ==", DEVICE)
    assert err.value.compile_error
