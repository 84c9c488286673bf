"""kubectl's ``-o`` values, parsed once, and the pure printers behind them.

- :func:`parse_output` reads ``-o`` (``table``, ``wide``, ``yaml``, ``json``, ``name``,
  ``jsonpath=…``, ``jsonpath-as-json=…``, ``custom-columns=…``) and refuses a value the
  command does not offer (exit 2).
- The data a command prints as json/yaml is what jsonpath, custom-columns and name read: for
  rows, a kubectl ``List`` (``{"apiVersion": "v1", "kind": "List", "items": [...]}``).
- :func:`names` is kubectl's ``-o name`` (``kind[.group]/name``, k8s.io/cli-runtime
  pkg/printers/name.go); :func:`custom_columns` is kubectl's custom-columns printer
  (kubectl/pkg/cmd/get/customcolumn.go) with its tabwriter layout.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kschedctl.base import terminal
from kschedctl.base.errors import UsageError
from kschedctl.printers import table

if TYPE_CHECKING:
    from kschedctl.printers import jsonpath

TABLE = "table"
WIDE = "wide"
YAML = "yaml"
JSON = "json"
NAME = "name"
JSONPATH = "jsonpath"
JSONPATH_AS_JSON = "jsonpath-as-json"
CUSTOM_COLUMNS = "custom-columns"

# What -o offers everywhere (commands without rows or a wide table leave some out).
ALL_FORMATS = (TABLE, WIDE, YAML, JSON, NAME, JSONPATH, JSONPATH_AS_JSON, CUSTOM_COLUMNS)
TEMPLATED = (JSONPATH, JSONPATH_AS_JSON, CUSTOM_COLUMNS)
# The formats that print data (not a table): the same on every command.
DATA_FORMATS = (YAML, JSON, NAME, JSONPATH, JSONPATH_AS_JSON, CUSTOM_COLUMNS)


@dataclass(frozen=True)
class OutputFormat:
    kind: str
    argument: str = ""

    @property
    def is_table(self) -> bool:
        return self.kind in (TABLE, WIDE)

    def __str__(self) -> str:
        return f"{self.kind}={self.argument}" if self.kind in TEMPLATED else self.kind


def spelled(formats: Sequence[str]) -> str:
    """The -o values as help and hints show them (``jsonpath=TEMPLATE``, …)."""
    shown = {
        JSONPATH: "jsonpath=TEMPLATE",
        JSONPATH_AS_JSON: "jsonpath-as-json=TEMPLATE",
        CUSTOM_COLUMNS: "custom-columns=SPEC",
    }
    return ", ".join(shown.get(f, f) for f in formats)


def parse_output(value: str, offered: Sequence[str]) -> OutputFormat:
    """``-o VALUE`` as this command offers it; a usage error (exit 2) otherwise."""
    kind, sep, argument = value.partition("=")
    if kind in TEMPLATED:
        if not sep or not argument:
            raise UsageError(
                f"-o {kind}: template format specified but no template given",
                hint=f"-o {spelled([kind])}",
            )
        fmt = OutputFormat(kind, argument)
        check_template(fmt)
    elif sep:
        raise UsageError(f"-o {value}: {kind} takes no argument", hint=f"-o {spelled(offered)}")
    else:
        fmt = OutputFormat(kind)
    if kind not in offered:
        raise UsageError(f"unknown output format {value!r}", hint=f"use -o {spelled(offered)}")
    return fmt


def check_template(fmt: OutputFormat) -> None:
    """Parse the template now: a typo is a usage error before any cluster call."""
    if fmt.kind == CUSTOM_COLUMNS:
        columns(fmt.argument)
    else:
        template(fmt.argument)


def template(text: str) -> jsonpath.Template:
    # the template engine on use: tables and yaml never pay for it (start-up)
    from kschedctl.printers import jsonpath

    try:
        return jsonpath.parse(text)
    except jsonpath.JSONPathError as err:
        raise UsageError(
            f"error parsing jsonpath {text}: {err}",
            hint="kubectl's JSONPath: -o jsonpath='{.items[*].metadata.name}' or "
            "'{range .items[*]}{.metadata.name}{\"\\n\"}{end}'",
        ) from err


# -- the data: kubectl's List -----------------------------------------------------------------


def camel(name: str) -> str:
    """A Python field name as its JSON key (``event_time`` -> ``eventTime``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_fields(record: Any, **values: Any) -> dict[str, Any]:
    """A dataclass record's fields under their JSON keys (camelCase, or a field's ``json``
    metadata), in declaration order; ``values`` (by JSON key) replace a value or add a key."""
    out = {
        f.metadata.get("json") or camel(f.name): getattr(record, f.name)
        for f in dataclasses.fields(record)
    }
    out.update(values)
    return out


def as_list(items: Sequence[Any]) -> dict[str, Any]:
    """Rows as kubectl prints a list with ``-o json``: a ``v1`` ``List``."""
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
            "items": list(items)}  # fmt: skip


def as_item(
    kind: str,
    name: str,
    body: dict[str, Any],
    *,
    namespace: str | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One row as an object of a List: ``kind`` and ``metadata`` (what ``-o name``, ``-l`` and
    custom-columns such as ``NAME:.metadata.name`` read) in front of the row's own keys."""
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    if labels is not None:
        metadata["labels"] = dict(labels)
    return {"kind": kind, "metadata": metadata, **body}


def is_list(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == "List" and "items" in data


def items(data: Any) -> list[Any]:
    """The objects of ``data``: a List's items, or ``data`` itself."""
    if is_list(data):
        return list(data["items"] or [])
    return [data]


def name_of(obj: Any) -> str:
    """kubectl's ``-o name`` of one object: ``kind/name``, ``kind.group/name`` for API groups."""
    # the template engine on use: tables and yaml never pay for it (start-up)
    from kschedctl.printers import jsonpath

    if not isinstance(obj, dict):
        raise UsageError("-o name: the output has no objects")
    kind = str(obj.get("kind") or "")
    name = str((obj.get("metadata") or {}).get("name") or "")
    if not kind or not name:
        raise UsageError(f"-o name: missing kind or name in {jsonpath.go_json(obj)[:120]}")
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    return f"{kind.lower()}.{group}/{name}" if group else f"{kind.lower()}/{name}"


def names(data: Any) -> list[str]:
    return [name_of(obj) for obj in items(data)]


# -- jsonpath ---------------------------------------------------------------------------------


def run_template(fmt: OutputFormat, data: Any) -> str:
    """``-o jsonpath=`` (no newline added, as kubectl) or ``-o jsonpath-as-json=``."""
    # the template engine on use: tables and yaml never pay for it (start-up)
    from kschedctl.printers import jsonpath

    parsed = template(fmt.argument)
    try:
        if fmt.kind == JSONPATH_AS_JSON:
            return parsed.execute_json(data)
        return parsed.execute(data)
    except jsonpath.JSONPathError as err:
        raise UsageError(
            f"error executing jsonpath {fmt.argument!r}: {err}",
            hint="check the field names against -o json",
        ) from err


# -- custom columns ---------------------------------------------------------------------------

# kubectl/pkg/cmd/get/customcolumn.go: RelaxedJSONPathExpression's forms.
_RELAXED = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")


@dataclass(frozen=True)
class Column:
    header: str
    expression: str
    template: jsonpath.Template


def relaxed(expression: str) -> str:
    """``.a.b``, ``a.b``, ``{.a.b}`` and ``{a.b}`` all mean ``{.a.b}`` (kubectl's rule)."""
    if not expression:
        return expression
    found = _RELAXED.match(expression)
    if found is None:
        raise UsageError(
            f"unexpected path string {expression!r}, expected a 'name1.name2' or '.name1.name2' "
            "or '{name1.name2}' or '{.name1.name2}'"
        )
    return "{." + (found.group(1) or found.group(2)) + "}"


def columns(spec: str) -> list[Column]:
    """``HEADER:EXPR,HEADER:EXPR`` (kubectl's custom-columns spec); exit 2 when malformed."""
    # the template engine on use: tables and yaml never pay for it (start-up)
    from kschedctl.printers import jsonpath

    if not spec:
        raise UsageError("custom-columns format specified but no custom columns given")
    result = []
    for part in spec.split(","):
        pieces = part.split(":")
        if len(pieces) != 2:
            raise UsageError(
                f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>",
                hint="-o custom-columns=NAME:.metadata.name,FORM:.form",
            )
        header, expression = pieces
        path = relaxed(expression)
        try:
            parsed = jsonpath.parse(path)
        except jsonpath.JSONPathError as err:
            raise UsageError(f"custom-columns {part}: error parsing {path}: {err}") from err
        result.append(Column(header, expression, parsed))
    return result


def go_sprint(value: Any) -> str:
    """``fmt.Sprint`` of a JSON value, as kubectl's custom-columns cells show it."""
    # the template engine on use: tables and yaml never pay for it (start-up)
    from kschedctl.printers import jsonpath

    if isinstance(value, dict):
        inner = " ".join(f"{k}:{go_sprint(value[k])}" for k in sorted(value))
        return f"map[{inner}]"
    if isinstance(value, list):
        return "[" + " ".join(go_sprint(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    return jsonpath.go_text(value)


def custom_columns(spec: str, data: Any, *, headers: bool = True) -> str:
    """The table kubectl prints for ``-o custom-columns=SPEC`` (``<none>`` where a path finds
    nothing; several results joined by commas)."""
    # the template engine on use: tables and yaml never pay for it (start-up)
    from kschedctl.printers import jsonpath

    cols = columns(spec)
    rows: list[list[str]] = [[c.header for c in cols]] if headers else []
    for obj in items(data):
        row = []
        for col in cols:
            try:
                found = col.template.find(obj)
            except jsonpath.JSONPathError as err:
                raise UsageError(f"custom-columns {col.header}:{col.expression}: {err}") from err
            cells = [terminal.escape(go_sprint(v)) for results in found for v in results]
            row.append(",".join(cells) if found and found[0] else "<none>")
        rows.append(row)
    return table.render(rows)
