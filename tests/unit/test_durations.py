"""One duration parser, two uses: config fields (Go durations) and ``--since`` (plus days).

Both uses accept exactly what their former separate parsers accepted, with the same messages:
the oracles below are those parsers, compared on every short string of duration-ish tokens.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from kschedctl.base.errors import UsageError
from kschedctl.model.config.durations import GO, SINCE, parse_duration, parse_go_duration, seconds
from kschedctl.model.config.durations import parse_go_duration as config_parse_duration

_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_SINCE_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_SINCE_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def old_config(value: Any) -> float:
    """kschedctl.model.config.validation.parse_duration before the parsers were merged."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{value!r} is not a duration (write it like 15s, 1m30s or 500ms)")
    text, sign = value, 1.0
    if text[0] in "+-":
        sign, text = (-1.0 if text[0] == "-" else 1.0), text[1:]
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    for match in _GO_PART.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _GO_UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text) or pos == 0:
        raise ValueError(f"{value!r} is not a duration (write it like 15s, 1m30s or 500ms)")
    return sign * total


def old_since(text: str, option: str = "--since") -> float:
    """kschedctl.model.config.durations.parse_duration before the parsers were merged."""
    value = text.strip()
    pos, total = 0, 0.0
    for match in _SINCE_PART.finditer(value):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _SINCE_UNITS[match.group(2)]
        pos = match.end()
    if not value or pos != len(value) or total <= 0:
        raise UsageError(
            f"invalid {option} {text!r}", hint="use a duration like 30s, 10m, 2h, 1h30m or 2d"
        )
    return total


def outcome(parse: Any, value: Any) -> tuple[str, Any]:
    try:
        return ("ok", parse(value))
    except UsageError as err:
        return ("usage", (err.message, err.hint, err.exit_code))
    except ValueError as err:
        return ("value", str(err))


TOKENS = ["", "0", "1", "15", "1.5", "1.", ".5", "-", "+", " ", "x"]
UNITS = ["", "ns", "us", "µs", "ms", "s", "m", "h", "d"]
PIECES = [t + u for t in TOKENS for u in UNITS]
CORPUS = sorted({"".join(p) for n in (1, 2) for p in itertools.product(PIECES, repeat=n)})


def _same(new: tuple[str, Any], old: tuple[str, Any]) -> bool:
    """The same outcome; an error message may add kube-scheduler's own wording at its end."""
    if new[0] == old[0] == "value":
        return bool(new[1] == old[1] or new[1].startswith(old[1][:-1] + "; kube-scheduler: "))
    return new == old


def test_config_durations_accept_exactly_what_they_did() -> None:
    for value in [*CORPUS, 15, 1.5, [], "  15s"]:
        assert _same(outcome(parse_go_duration, value), outcome(old_config, value)), value
        assert _same(outcome(config_parse_duration, value), outcome(old_config, value)), value


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("15000000\u03bcs", 15.0),  # Go's unitMap: Greek mu too
        ("15000000\u00b5s", 15.0),  # and the micro sign
        ("2562047h", 2562047 * 3600.0),  # the longest time.Duration fits
        ("-2562047h", -2562047 * 3600.0),
    ],
)
def test_go_durations_time_parse_duration_accepts(value: str, seconds: float) -> None:
    assert parse_go_duration(value) == seconds


@pytest.mark.parametrize(
    ("value", "go_says"),
    [
        (None, 'time: invalid duration ""'),  # metav1.Duration reads null as ""
        ("", 'time: invalid duration ""'),
        ("2562048h", 'time: invalid duration "2562048h"'),  # past int64 nanoseconds
        ("9999999999h", 'time: invalid duration "9999999999h"'),
    ],
)
def test_go_durations_time_parse_duration_refuses(value: Any, go_says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(go_says)):
        parse_go_duration(value)


def test_since_durations_accept_exactly_what_they_did() -> None:
    for value in [*CORPUS, " 10m ", "\t2d\n"]:
        assert outcome(parse_duration, value) == outcome(old_since, value), value
    assert outcome(lambda v: parse_duration(v, "--max-age"), "x") == outcome(
        lambda v: old_since(v, "--max-age"), "x"
    )


@pytest.mark.parametrize(
    ("text", "syntax", "expected"),
    [
        ("1m30s", GO, 90.0),
        ("-2s", GO, -2.0),
        (".5h", GO, 1800.0),
        ("500ms", GO, 0.5),
        ("2d", SINCE, 172800.0),
        ("1h30m", SINCE, 5400.0),
    ],
    ids=["go-compound", "go-signed", "go-leading-point", "go-ms", "since-days", "since-compound"],
)
def test_seconds(text: str, syntax: Any, expected: float) -> None:
    assert seconds(text, syntax) == expected


@pytest.mark.parametrize(
    ("text", "syntax"),
    [("2d", GO), ("-2s", SINCE), (".5h", SINCE), ("1ns", SINCE), ("15", GO), ("", SINCE)],
    ids=[
        "go-no-days",
        "since-unsigned",
        "since-digit-before-point",
        "since-no-ns",
        "no-unit",
        "empty",
    ],
)
def test_seconds_refuses(text: str, syntax: Any) -> None:
    with pytest.raises(ValueError):
        seconds(text, syntax)
