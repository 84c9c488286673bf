"""Object names, labels and resource names as the API server checks them, for objects read
from a file (a snapshot, a workload) before any of them reaches a lab.

Pure. The rules are apimachinery's (``pkg/util/validation``): a DNS-1123 subdomain for most
object names (nodes, pods, PriorityClasses), a DNS-1123 label for namespaces, a qualified name
for label and annotation keys and resource names, a label value for label values; the words
come from :mod:`kschedctl.model.config.shapes`. A snapshot of 20,000 pods repeats the same few
hundred names and labels, so each distinct string is checked once.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Literal

from kschedctl.base.errors import Problem, quote
from kschedctl.model.config.schema import join
from kschedctl.model.config.shapes import (
    DNS_PATTERNS,
    dns_label_problem,
    dns_subdomain_problem,
    label_value_problems,
    qualified_name_problems,
)

NameRule = Literal["subdomain", "label"]


def name_schema(rule: NameRule) -> dict[str, Any]:
    """The JSON Schema of a name under ``rule`` (pattern and length)."""
    pattern, longest = DNS_PATTERNS[rule]
    return {"pattern": f"^{pattern}$", "maxLength": longest}


@functools.lru_cache(maxsize=65536)
def name_problem(value: str, rule: NameRule = "subdomain") -> str | None:
    """Why ``value`` is not an object name under ``rule``, or None."""
    return dns_subdomain_problem(value) if rule == "subdomain" else dns_label_problem(value)


@functools.lru_cache(maxsize=65536)
def _key_problems(key: str) -> tuple[str, ...]:
    return tuple(qualified_name_problems(key)) if key else ("must not be empty",)


@functools.lru_cache(maxsize=65536)
def _value_problems(value: str) -> tuple[str, ...]:
    return tuple(label_value_problems(value))


def check_name(value: Any, path: str, out: list[Problem], rule: NameRule = "subdomain") -> None:
    if not isinstance(value, str):
        out.append(Problem(path, f"must be a string, not {quote(value)}"))
        return
    problem = name_problem(value, rule)
    if problem:
        out.append(Problem(path, problem))


def check_key(key: Any, path: str, out: list[Problem], what: str = "key") -> None:
    """``key`` (a label, annotation or taint key, a resource name) as a qualified name."""
    problems = _key_problems(key) if isinstance(key, str) else ("must be a string",)
    out.extend(Problem(path, f"{what} {quote(key)}: {m}") for m in problems)


def check_label_value(value: Any, path: str, out: list[Problem]) -> None:
    if not isinstance(value, str):
        out.append(Problem(path, f"a label value must be a string, not {quote(value)}"))
        return
    out.extend(Problem(path, f"label value {quote(value)}: {m}") for m in _value_problems(value))


def check_keys(values: Any, path: str, out: list[Problem], what: str = "key") -> None:
    """The keys of a mapping (annotations, resources) as qualified names."""
    if isinstance(values, Mapping):  # not a mapping: the type checks' problem
        for key in values:
            if type(key) is str and not _key_problems(key):
                continue  # the common case, without building a path
            check_key(key, join(path, str(key)), out, what)


@functools.lru_cache(maxsize=65536)
def _label_ok(key: str, value: str) -> bool:
    return not _key_problems(key) and not _value_problems(value)


def check_labels(labels: Any, path: str, out: list[Problem]) -> None:
    """Label keys (qualified names) and values (label values, strings)."""
    if isinstance(labels, Mapping):
        for key, value in labels.items():
            if type(key) is str and type(value) is str and _label_ok(key, value):
                continue
            where = join(path, str(key))
            check_key(key, where, out, "label key")
            check_label_value(value, where, out)
