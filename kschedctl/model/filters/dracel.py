"""CEL device selectors as kube-scheduler v1.36 evaluates them (``k8s.io/dynamic-resource-
allocation/cel``): the ``device`` variable (``driver``, ``attributes``, ``capacity``,
``allowMultipleAllocations``) and the Kubernetes CEL library selectors use (``quantity``,
``semver``, the strings, lists and regex extensions).

The CEL core is ``common-expression-language`` (cel-rust's Python bindings): maintained,
native speed, cel-go's heterogeneous equality. It has no Kubernetes library and no string
extensions, so this module supplies them as functions; quantities and versions travel through
CEL as one-key maps (``{"@quantity": nanos}``, ``{"@semver": "1.2.3"}``) so ``==`` compares
values. What it cannot evaluate as cel-go would (``cel.bind``, optionals ``.?``, a selector
over the size limits) raises :class:`Unsupported`: the caller reports the filter as not
evaluated instead of guessing.

Hostile input: a selector comes from the cluster or a snapshot. kube-apiserver refuses
selectors over the cost limit, but a snapshot is a file: the length limit and the bound on
comprehension macros keep one evaluation polynomial and small.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .quantity import NANO, QuantityError, parse_quantity

__all__ = [
    "CelError",
    "Unsupported",
    "device_json",
    "device_matches",
    "device_matches_json",
    "device_variable",
]

# resourceapi.CELSelectorExpressionMaxLength
MAX_LENGTH = 10 * 1024
# Comprehension macros in one selector: each iterates a device's attributes (at most 32) or a
# literal list; two nested stay cheap, the cost of deeper nesting grows as a power.
MAX_MACROS = 3
_MACROS = re.compile(r"\.\s*(all|exists|exists_one|map|filter|transformList|transformMap)\s*\(")
_UNSUPPORTED = (
    (re.compile(r"\bcel\s*\.\s*bind\s*\("), "cel.bind"),
    (re.compile(r"\.\s*\?"), "optional field selection (.?)"),
    (re.compile(r"\[\s*\?"), "optional index ([?])"),
    (re.compile(r"\boptional\s*\."), "optional values"),
    (re.compile(r"\.\s*includes\s*\("), "includes (DRAListTypeAttributes)"),
)
_STRING_LITERAL = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'")
QUANTITY = "@quantity"
SEMVER = "@semver"


class CelError(Exception):
    """A selector failed to compile or evaluate; ``str`` is cel-go's wording where known."""

    def __init__(self, message: str, *, compile_error: bool = False) -> None:
        super().__init__(message)
        self.compile_error = compile_error


class Unsupported(Exception):
    """The selector uses CEL this evaluator does not reproduce: not evaluated."""


# --- values ----------------------------------------------------------------------------------


def _q(nanos: int) -> dict[str, str]:
    return {QUANTITY: str(nanos)}


def _is(value: Any, tag: str) -> bool:
    return isinstance(value, Mapping) and len(value) == 1 and tag in value


def _nanos(value: Any, fn: str) -> int:
    if _is(value, QUANTITY):
        return int(value[QUANTITY])
    if isinstance(value, str):
        try:
            return parse_quantity(value)
        except QuantityError as err:
            raise ValueError(f"{fn}: {err}") from err
    if isinstance(value, int) and not isinstance(value, bool):
        return value * NANO
    raise ValueError(f"no such overload: {fn}")


_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)


def _normalize(text: str) -> str:
    """semver's normalization: no leading "v", missing minor/patch added, no leading zeros."""
    text = text.removeprefix("v")
    m = re.match(r"([0-9.]*)(.*)", text, re.DOTALL)
    core, rest = (m.group(1), m.group(2)) if m else ("", text)
    parts = [p.lstrip("0") or "0" for p in core.split(".")] if core else []
    while 0 < len(parts) < 3:
        parts.append("0")
    return ".".join(parts) + rest


def _parse_semver(text: str, normalize: bool = False) -> tuple[int, int, int, str]:
    if normalize:
        text = _normalize(text)
    m = _SEMVER.fullmatch(text)
    if m is None:
        raise ValueError(f"could not parse {text!r} as semver")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""


def _semver(text: str, normalize: bool = False) -> dict[str, str]:
    major, minor, patch, pre = _parse_semver(text, normalize)
    return {SEMVER: f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else "")}


def _version(value: Any, fn: str) -> tuple[int, int, int, str]:
    if _is(value, SEMVER):
        return _parse_semver(value[SEMVER])
    raise ValueError(f"no such overload: {fn}")


def _pre_key(pre: str) -> tuple[int, tuple[tuple[int, int, str], ...]]:
    if not pre:
        return (1, ())  # a release outranks its pre-releases
    ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (0, ids)


def _cmp(a: Any, b: Any, fn: str) -> int:
    if _is(a, SEMVER):
        va, vb = _version(a, fn), _version(b, fn)
        ka = (va[:3], _pre_key(va[3]))
        kb = (vb[:3], _pre_key(vb[3]))
    else:
        ka, kb = _nanos(a, fn), _nanos(b, fn)  # type: ignore[assignment]
    return (ka > kb) - (ka < kb)


def _as_integer(q: Any) -> int:
    n = _nanos(q, "asInteger")
    if n % NANO or not -(2**63) <= n // NANO < 2**63:
        raise ValueError("cannot convert value to integer")
    return n // NANO


def _index_of(target: Any, item: Any, start: int = 0, *, last: bool = False) -> int:
    if isinstance(target, str):
        if last:
            return target.rfind(item) if start == 0 else target.rfind(item, 0, start + len(item))
        return target.find(item, start)
    items = list(target)
    rng = range(len(items) - 1, -1, -1) if last else range(len(items))
    return next((i for i in rng if items[i] == item), -1)


def _substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if not 0 <= start <= end <= len(s):
        raise ValueError(f"index out of range: {start if start > len(s) or start < 0 else end}")
    return s[start:end]


def _char_at(s: str, i: int) -> str:
    if not 0 <= i <= len(s):
        raise ValueError(f"index out of range: {i}")
    return s[i : i + 1]


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        return chars if n < 0 else [*chars[: n - 1], "".join(chars[n - 1 :])] if chars else []
    return s.split(sep) if n < 0 else s.split(sep, n - 1)


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new) if n < 0 else s.replace(old, new, n)


def _find(s: str, pattern: str) -> str:
    m = _regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    found = [m.group(0) for m in _regex(pattern).finditer(s)]
    return found if n < 0 else found[:n]


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise ValueError(f"failed to compile regex: {err}") from err


def _min_max(pick: Callable[..., Any]) -> Callable[[Any], Any]:
    def fn(items: Any) -> Any:
        items = list(items)
        if not items:
            raise ValueError(f"{pick.__name__}(list) argument must not be empty")
        return pick(items)

    return fn


FUNCTIONS: dict[str, Callable[..., Any]] = {
    # k8s quantity library
    "quantity": lambda s: _q(_nanos(s, "quantity")) if isinstance(s, str) else _nanos(s, "x"),
    "isQuantity": lambda s: isinstance(s, str) and _try(lambda: parse_quantity(s)),
    "sign": lambda q: (lambda n: (n > 0) - (n < 0))(_nanos(q, "sign")),
    "isInteger": lambda q: _try(lambda: _as_integer(q)),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: _nanos(q, "asApproximateFloat") / NANO,
    "add": lambda a, b: _q(_nanos(a, "add") + _nanos(b, "add")),
    "sub": lambda a, b: _q(_nanos(a, "sub") - _nanos(b, "sub")),
    # quantity and semver
    "compareTo": lambda a, b: _cmp(a, b, "compareTo"),
    "isGreaterThan": lambda a, b: _cmp(a, b, "isGreaterThan") > 0,
    "isLessThan": lambda a, b: _cmp(a, b, "isLessThan") < 0,
    # k8s semver library (SemverVersion 1: normalization)
    "semver": lambda s, norm=False: _semver(s, norm),
    "isSemver": lambda s, norm=False: _try(lambda: _parse_semver(s, norm)),
    "major": lambda v: _version(v, "major")[0],
    "minor": lambda v: _version(v, "minor")[1],
    "patch": lambda v: _version(v, "patch")[2],
    # cel-go strings extension (version 2)
    "charAt": _char_at,
    "indexOf": _index_of,
    "lastIndexOf": lambda t, x, *a: _index_of(t, x, *a, last=True),
    "lowerAscii": lambda s: "".join(c.lower() if c.isascii() else c for c in s),
    "upperAscii": lambda s: "".join(c.upper() if c.isascii() else c for c in s),
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": lambda s: s.strip(),
    "join": lambda items, sep="": sep.join(items),
    # k8s lists library
    "isSorted": lambda items: (lambda x: all(x[i] <= x[i + 1] for i in range(len(x) - 1)))(
        list(items)
    ),
    "sum": lambda items: sum(items),
    "min": _min_max(min),
    "max": _min_max(max),
    # k8s regex library
    "find": _find,
    "findAll": _find_all,
}


def _try(fn: Callable[[], Any]) -> bool:
    try:
        fn()
    except ValueError:
        return False
    return True


# --- the device variable --------------------------------------------------------------------


def _qualified(name: str, driver: str) -> tuple[str, str]:
    """parseQualifiedName: "domain/id", or the driver's own domain for a bare id."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _attribute_value(attr: Mapping[str, Any]) -> Any:
    for key in ("int", "bool", "string"):
        if key in attr:
            return attr[key]
    if "version" in attr:
        return {SEMVER: str(attr["version"])}
    raise CelError("attribute: unsupported attribute value type")


def device_variable(device: Mapping[str, Any], driver: str) -> dict[str, Any]:
    """``device`` as selectors see it: attributes and capacity by domain, then id."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        domain, ident = _qualified(str(name), driver)
        attributes.setdefault(domain, {})[ident] = _attribute_value(attr or {})
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _qualified(str(name), driver)
        value = (cap or {}).get("value", "0")
        try:
            capacity.setdefault(domain, {})[ident] = _q(parse_quantity(str(value)))
        except QuantityError as err:
            raise CelError(f"capacity {name}: {err}") from err
    return {
        "driver": driver,
        "allowMultipleAllocations": bool(device.get("allowMultipleAllocations")),
        "attributes": attributes,
        "capacity": capacity,
    }


# --- compiling and evaluating ---------------------------------------------------------------


@dataclass(frozen=True)
class _Compiled:
    program: Any
    literals: tuple[str, ...]  # string literals: domains a selector may look up


@lru_cache(maxsize=1024)
def _compile(expression: str) -> _Compiled:
    if len(expression) > MAX_LENGTH:
        raise Unsupported(f"the selector is longer than {MAX_LENGTH} characters")
    if len(_MACROS.findall(expression)) > MAX_MACROS:
        raise Unsupported(f"the selector uses more than {MAX_MACROS} comprehension macros")
    for pattern, what in _UNSUPPORTED:
        if pattern.search(expression):
            raise Unsupported(f"the selector uses {what}, which this evaluator does not support")
    try:
        import cel  # the native CEL core, loaded on first use (offline commands never need it)
    except ImportError as err:
        raise Unsupported(
            "CEL selectors need the common-expression-language package (Python 3.11+)"
        ) from err
    try:
        program = cel.compile(expression)
    except (ValueError, RuntimeError) as err:
        raise CelError(f"compilation failed: {err}", compile_error=True) from err
    literals = tuple(a if a else b for a, b in _STRING_LITERAL.findall(expression))
    return _Compiled(program, literals)


def _with_default_domains(
    variable: dict[str, Any], literals: tuple[str, ...], expression: str
) -> dict[str, Any]:
    """kube-scheduler's attribute and capacity maps answer a missing domain with an empty map
    (``newStringInterfaceMapWithDefault``): the domains the selector names are added empty,
    unless it asks whether a domain is there (``in``), which the default map answers "no"."""
    if re.search(r"\bin\s+device\s*\.\s*(attributes|capacity)\b", expression):
        return variable
    out = dict(variable)
    for key in ("attributes", "capacity"):
        maps = dict(variable[key])
        for lit in literals:
            maps.setdefault(lit, {})
        out[key] = maps
    return out


_ERROR_PREFIX = re.compile(r"^Function '\w+' error: Python function call failed: \w+: ")


def _cel_go_message(err: Exception) -> str:
    if isinstance(err, KeyError):
        return f"no such key: {err.args[0] if err.args else ''}"
    text = str(err).split("\n")[0]
    text = _ERROR_PREFIX.sub("", text)
    if text.startswith("Undefined variable or function"):
        m = re.search(r"'([^']*)'", text)
        return f"found no matching overload for '{m.group(1) if m else text}'"
    return text


@lru_cache(maxsize=65536)
def _matches_cached(expression: str, device_json: str) -> bool:
    return device_matches(expression, json.loads(device_json))


def device_matches_json(expression: str, device_json: str) -> bool:
    """``device_matches`` on ``device_variable``'s output as canonical JSON: the nodes of a
    pool of identical devices (the common cluster) evaluate each selector once."""
    return _matches_cached(expression, device_json)


def device_json(variable: Mapping[str, Any]) -> str:
    return json.dumps(variable, sort_keys=True, separators=(",", ":"))


def device_matches(expression: str, device: Mapping[str, Any]) -> bool:
    """Whether ``device`` (``device_variable``'s output) satisfies the selector; raises
    :class:`CelError` (kube-scheduler's "CEL compile error" / "CEL runtime error") or
    :class:`Unsupported`."""
    compiled = _compile(expression)
    import cel  # the native core, loaded on first use by _compile above

    ctx = cel.Context()
    for name, fn in FUNCTIONS.items():
        ctx.add_function(name, fn)
    ctx.add_variable("device", _with_default_domains(dict(device), compiled.literals, expression))
    try:
        result = compiled.program.execute(ctx)
    except (KeyError, ValueError, RuntimeError, TypeError, OverflowError) as err:
        raise CelError(_cel_go_message(err)) from err
    if not isinstance(result, bool):
        raise CelError(f"CEL result of type {type(result).__name__} could not be converted to bool")
    return result
