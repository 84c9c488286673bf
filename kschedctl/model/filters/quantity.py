"""Kubernetes resource quantities, parsed exactly as ``resource.ParseQuantity`` does.

A quantity is held as an integer number of nano-units (10^-9). ``ParseQuantity`` itself rounds
every value up to the nearest nano, so this representation is exact, and sums of quantities are
exact too. kube-scheduler converts a (summed) quantity to int64 with ``MilliValue()`` for cpu and
``Value()`` for everything else; both round up, which :func:`to_milli` and :func:`to_units` do.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

__all__ = ["QuantityError", "parse_quantity", "to_milli", "to_units", "NANO"]

NANO = 1_000_000_000
_INT64_MAX = 2**63 - 1

_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

# sign, integer digits, optional "." and fraction digits, then the suffix: letters from the set
# Go scans ("eEinumkKMGTP"), an optional sign and digits (for the e<N> exponent form).
_SYNTAX = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_GO_INT = re.compile(r"[+-]?[0-9]+")


class QuantityError(ValueError):
    """The string is not a Kubernetes quantity."""


def _interpret(suffix: str) -> tuple[int, int, bool]:
    """Return (base, exponent, is_binary) for a suffix, like ``suffixHandler.interpret``."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], False
    if suffix in _BINARY:
        return 2, _BINARY[suffix], True
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT.fullmatch(suffix[1:]):
        return 10, int(suffix[1:]), False
    raise QuantityError(f"unable to parse quantity's suffix {suffix!r}")


@lru_cache(maxsize=4096)
def _parse_str(text: str) -> int:
    if not text:
        raise QuantityError("quantities must match the regular expression (empty string)")
    m = _SYNTAX.fullmatch(text)
    if m is None:
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    sign, whole, frac, suffix = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    base, exponent, binary = _interpret(suffix)
    mantissa = int((whole or "0") + frac) if (whole or frac) else 0
    value = Fraction(mantissa, 10 ** len(frac))
    if base == 10:
        value *= Fraction(10) ** exponent
    else:
        value *= 2**exponent
        if value > _INT64_MAX:  # Go caps binary-SI quantities at the int64 maximum
            value = Fraction(_INT64_MAX)
    nanos = value * NANO
    # ParseQuantity rounds non-zero values up (away from zero) to the nearest nano.
    rounded = -((-nanos.numerator) // nanos.denominator)
    return -rounded if sign == "-" else rounded


def parse_quantity(value: object) -> int:
    """Parse a quantity (``"100m"``, ``"1Gi"``, ``"1e3"``, ``"1k"``, or a JSON number) to nanos.

    Raises :class:`QuantityError` when the value is not a valid quantity.
    """
    if isinstance(value, bool):
        raise QuantityError(f"not a quantity: {value!r}")
    if isinstance(value, int):
        return value * NANO
    if isinstance(value, float):
        return _parse_str(repr(value))
    if isinstance(value, str):
        return _parse_str(value.strip())
    raise QuantityError(f"not a quantity: {value!r}")


def to_milli(nanos: int) -> int:
    """``Quantity.MilliValue()``: the value in thousandths, rounded up."""
    return -((-nanos) // 1_000_000)


def to_units(nanos: int) -> int:
    """``Quantity.Value()``: the value in whole units, rounded up."""
    return -((-nanos) // NANO)
