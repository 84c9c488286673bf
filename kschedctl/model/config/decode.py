"""Reading a KubeSchedulerConfiguration file the way kube-scheduler reads it (before defaulting).

Pure. kube-scheduler (``cmd/kube-scheduler/app/options/configfile.go`` loadConfig) hands the
whole file to its scheme's strict UniversalDecoder
(``k8s.io/apimachinery/pkg/runtime/serializer/json/json.go``):

- a file whose first non-blank character is ``{`` is JSON (``utilyaml.IsJSONBuffer``): one
  value, nothing after it, no trailing comma, no duplicate keys;
- anything else is YAML read by ``sigs.k8s.io/yaml`` (go-yaml v2, YAML 1.1) — its FIRST
  document only: ``yaml.Unmarshal`` never looks further, so later documents, even malformed
  ones, are ignored (a warning here) — then converted to JSON. The conversion is why
  ``parallelism: 16.0`` is accepted: Go's ``json.Marshal`` writes the float 16.0 as ``16``
  (any integral float under 1e21), which then decodes into an int32.

The strict part (unknown fields, wrong types, int32 ranges) is checked on the result by
:mod:`kschedctl.model.config.validation`, which knows the types.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from kschedctl.base.errors import WARNING, Problem, quote
from kschedctl.model.config.schema import AliasBudget, YamlError, parse_yaml

__all__ = ["Decoded", "decode_config_text", "is_json", "json_numbers"]

# encoding/json writes a float64 with 'f' formatting below 1e21: an integral one has no
# fraction, so it reads back as an integer (encode.go floatEncoder).
_JSON_INT_FLOAT_LIMIT = 1e21


@dataclass
class Decoded:
    """The document kube-scheduler decodes (None: nothing usable), plus what was noticed."""

    doc: Any
    problems: list[Problem] = field(default_factory=list)
    is_json: bool = False


# A ConfigMap value that is a scheduler config: it names the kind or group, or (written
# without apiVersion/kind, which kube-scheduler refuses: "Object 'Kind' is missing") starts with
# the profiles a config holds.
_SCHEDULER_CONFIG = re.compile(
    r"KubeSchedulerConfiguration|kubescheduler\.config\.k8s\.io|^profiles:", re.M
)


def holds_config(text: str) -> bool:
    """Whether ``text`` (a ConfigMap value) is meant as a KubeSchedulerConfiguration."""
    return bool(_SCHEDULER_CONFIG.search(text))


def is_json(text: str) -> bool:
    """Whether kube-scheduler reads ``text`` as JSON (its first non-blank character is ``{``)."""
    return text.lstrip(" \t\r\n").startswith("{")


def json_numbers(value: Any) -> Any:
    """``value`` as it comes out of sigs.k8s.io/yaml's YAML-to-JSON step: integral floats
    below 1e21 become integers (16.0 → 16), everything else is unchanged."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value) if abs(value) < _JSON_INT_FLOAT_LIMIT else value
    if isinstance(value, dict):
        return {k: json_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_numbers(v) for v in value]
    return value


_JSON_HINT = (
    "; kube-scheduler reads a file that starts with '{' as JSON (no trailing commas, one value)"
)


def decode_config_text(text: str, budget: AliasBudget | None = None) -> Decoded:
    """The first document of ``text`` as kube-scheduler decodes it (YamlError if it cannot)."""
    if is_json(text):
        return Decoded(decode_json(text, _JSON_HINT), is_json=True)
    budget = budget or AliasBudget()
    _check_yaml_directive(text)
    docs = parse_yaml(text, budget, go_yaml=True, first_only=True)
    decoded = Decoded(json_numbers(docs[0]))
    rest = _rest_of_stream(text)
    if rest:
        decoded.problems.append(
            Problem(
                "",
                f"{rest}: kube-scheduler reads only the first YAML document of its --config "
                "file and ignores the rest; put each configuration in a file of its own",
                severity=WARNING,
            )
        )
    return decoded


def _check_yaml_directive(text: str) -> None:
    """go-yaml v2 (parserc.go yaml_parser_process_directives) reads YAML 1.1 only: a
    ``%YAML`` directive naming any other version (1.2 too, which PyYAML reads) is refused."""
    for line in text.lstrip("\ufeff").splitlines():
        stripped = line.strip()
        if stripped.startswith("%YAML"):
            version = stripped[len("%YAML") :].split("#", 1)[0].strip()
            if version != "1.1":
                raise YamlError(
                    f"%YAML {quote(version)}: kube-scheduler's YAML reader (go-yaml v2) reads "
                    "YAML 1.1 documents only (yaml: found incompatible YAML document); remove "
                    "the directive or write %YAML 1.1"
                )
        elif stripped and not stripped.startswith(("#", "%")):
            return  # the directives end where the first document starts


def _rest_of_stream(text: str) -> str:
    """What follows the first document, described ("" if nothing but empty documents)."""
    # Composed only (nodes, no values built, aliases not expanded): cheap and bounded.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    count, line = 0, 0
    try:
        first = True
        while loader.check_node():
            node = loader.get_node()
            if not first and node is not None and not _empty(node):
                count += 1
                line = line or node.start_mark.line + 1
            first = False
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f", malformed at line {mark.line + 1}" if mark is not None else ""
        return f"more YAML follows the first document{where}"
    finally:
        loader.dispose()
    if not count:
        return ""
    plural = "s" if count > 1 else ""
    return f"{count} more YAML document{plural} (from line {line})"


def _empty(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null") and not node.value


def decode_json(text: str, hint: str = "") -> Any:
    """JSON as Go's encoding/json reads it: a duplicate field, NaN or Infinity is an error
    (``hint`` is added to the message of a malformed document)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise YamlError(f"duplicate field {quote(key)} in JSON")
            out[key] = value
        return out

    def constant(name: str) -> Any:
        raise YamlError(f"invalid JSON value {name}")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as err:
        raise YamlError(
            f"malformed JSON (line {err.lineno}, column {err.colno}): {err.msg}{hint}"
        ) from err
    except RecursionError as err:
        raise YamlError("JSON nested too deeply") from err
