"""``kschedctl schema spec|policy|snapshot``: print a JSON Schema of kschedctl's own files (offline)."""

# No "from __future__ import annotations": typer would re-evaluate every annotation string
# at each start-up; evaluated once at import they cost less (benchmarks/startup.py).

import sys
from enum import Enum
from typing import Annotated

import typer

from kschedctl.cli import registers
from kschedctl.cli.paths import guard_paths


class SchemaName(str, Enum):
    spec = "spec"
    policy = "policy"
    snapshot = "snapshot"


@guard_paths
def schema(
    name: Annotated[
        SchemaName,
        typer.Argument(
            help="spec: scheduler.yaml; policy: a FallbackPolicy file (--policy, "
            "spec.builtin.policy); snapshot: a file of kschedctl snapshot.",
            metavar="spec|policy|snapshot",
            show_default=False,
            case_sensitive=False,
        ),
    ],
) -> None:
    """Print a JSON Schema (see HELP)."""
    # Imported here so that --help and shell completion do not pay for the spec model.
    from kschedctl.render.schemas import shipped_path

    sys.stdout.write(shipped_path(name.value).read_text(encoding="utf-8"))
    sys.stdout.flush()


HELP = (
    "Print the JSON Schema (draft 2020-12) of scheduler.yaml (spec), of a fallback policy "
    "file (policy) or of a cluster snapshot (snapshot), for editors and CI checks. Files made by create name theirs in a first "
    "line `# yaml-language-server: $schema=scheduler.schema.json` (the copy create writes "
    "beside them, so it works offline and matches this version). Works offline."
)


register = registers("schema", schema, help=HELP, no_args_is_help=True)
