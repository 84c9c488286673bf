"""Options shared by several commands, declared once: typer ``Annotated`` aliases, and flag
groups (``flag_group``) for the flags that always go together, which a command takes as one
value (``printing: Printing``, ``selectors: Selectors``; kubectl's connection flags, ``kube:
Kube``, are the group in :mod:`kschedctl.cli.kubeflags`).

``-n/--namespace``, ``-A``, ``-o``, ``--no-headers``, ``-l``, ``--field-selector``, ``--since``
for the cluster-facing commands and ``--kubernetes-version`` for the offline ones. Every
command module is imported at start-up (they register themselves), so one module of aliases
costs nothing more than several.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, TypeVar

import typer
from typer.core import TyperCommand

from kschedctl.base.errors import UsageError
from kschedctl.cli import completers, output
from kschedctl.cli.usage import bad_choice
from kschedctl.model.config.versions import DEFAULT_VERSION, parse_version, supported_minors
from kschedctl.printers import formats

if TYPE_CHECKING:
    from kschedctl.model.filters.selectors import FieldRequirement, Selector

# A flag of a group (see flag_group): its Annotated type and its default.
Flag = tuple[Any, Any]
_Command = TypeVar("_Command", bound=Callable[..., Any])


def flag_group(
    param: str, flags: dict[str, Flag], make: Callable[..., Any]
) -> Callable[[_Command], _Command]:
    """A decorator: the command's parameter ``param`` becomes the options ``flags`` (by
    parameter name, in their order, where ``param`` stands, so --help lists them there) and
    the command gets ``make(**their values)`` as ``param``."""

    def grouped(command: _Command) -> _Command:
        signature = inspect.signature(command, eval_str=True)
        params: list[inspect.Parameter] = []
        for each in signature.parameters.values():
            if each.name != param:
                params.append(each)
                continue
            params += [each.replace(name=name, annotation=kind, default=default)
                       for name, (kind, default) in flags.items()]  # fmt: skip

        @functools.wraps(command)
        def parsed(**kwargs: Any) -> Any:
            value = make(**{name: kwargs.pop(name) for name in flags})
            return command(**kwargs, **{param: value})

        # typer reads the signature and the annotations: the flags', not ``param``'s
        parsed.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        parsed.__annotations__ = {each.name: each.annotation for each in params}
        return parsed  # type: ignore[return-value]

    return grouped


def flag(kind: Any, default: Any, decls: str | tuple[str, ...], help: str, **extra: Any) -> Flag:
    """One option of a flag group: ``kind`` its type, ``decls`` its flag (or flags)."""
    names = (decls,) if isinstance(decls, str) else decls
    return Annotated[kind, typer.Option(*names, help=help, **extra)], default


# kubectl's --kubeconfig and --context (scheduler run has these two only), --cluster, --user
# -n and -A: one declaration for every namespaced read (list, status, logs, remove, top nodes,
# why, events); namespace_scope reads them the same way everywhere. deploy, create and snapshot
# have a -n of their own: where to deploy, the pending pods to keep.
Namespace = Annotated[
    str | None,
    typer.Option(
        "-n",
        "--namespace",
        help="Only this namespace (default: the context's namespace for pods and events; "
        "every namespace for schedulers and the pods on nodes).",
        show_default=False,
        autocompletion=completers.namespaces,
    ),
]
AllNamespaces = Annotated[
    bool, typer.Option("-A", "--all-namespaces", help="Across all namespaces (wins over -n).")
]


def namespace_scope(namespace: str | None, all_namespaces: bool) -> str | None:
    """-n and -A as one value for the commands whose default is every namespace: the
    namespace to keep, or None for all of them (-A wins over -n, as in kubectl)."""
    return None if all_namespaces else namespace


def plugin_option(help: str) -> Any:
    """``--plugin PATH.py|package.module``, repeatable: the same flag for the scheduler that
    runs Python plugins (scheduler run) and for ``why``, which evaluates them as it would."""
    return typer.Option("--plugin", metavar="PATH.py|package.module", help=help, show_default=False)


def export_option(help: str) -> Any:
    """``--export FILE``: the picture a command draws, also written as SVG or HTML
    (cli/picture_export.py); the same flag for ``top nodes`` and ``events --timeline``, whose
    help says when it applies."""
    return typer.Option("--export", help=help, metavar="FILE", show_default=False)


# -o: one definition for every command; each offers a subset of kubectl's values
# (kschedctl.printers.formats), listed in its help the same way, checked by `check_output`
# (cli/common.py), which refuses the others with exit 2.
TABLE_FORMATS = (formats.TABLE, *formats.DATA_FORMATS)
WIDE_FORMATS = (formats.TABLE, formats.WIDE, *formats.DATA_FORMATS)
DATA_FORMATS = formats.DATA_FORMATS


def output_option(offered: tuple[str, ...], default_help: str = "") -> Any:
    """The ``-o/--output`` option offering ``offered``: the same flags and help everywhere."""
    return typer.Option(
        "-o",
        "--output",
        help=f"Output format: {formats.spelled(offered)}{default_help}. jsonpath and "
        "custom-columns use kubectl's syntax and read the data -o json prints.",
        metavar="FORMAT",
        show_default=False,
        autocompletion=completers.choices(offered),
    )


def check_output(value: str | None, offered: tuple[str, ...]) -> formats.OutputFormat:
    """``-o`` parsed (a usage error, exit 2, if this command does not offer it); no ``-o`` is
    the first offered format (the table)."""
    return formats.parse_output(value or offered[0], offered)


NO_HEADERS = flag(
    bool, False, "--no-headers", "Tables and custom-columns: leave out the header row."
)


class Printing(NamedTuple):
    """-o and --no-headers as given, with the -o values the command offers."""

    out: str | None = None
    no_headers: bool = False
    offered: tuple[str, ...] = TABLE_FORMATS

    def format(self) -> formats.OutputFormat:
        """-o checked (exit 2 for a value the command does not offer; no -o: the table)."""
        return check_output(self.out, self.offered)

    @property
    def headers(self) -> bool:
        return not self.no_headers


DEFAULT_PRINTING = Printing()


def output_flags(
    offered: tuple[str, ...], default_help: str = " (default table)"
) -> Callable[[_Command], _Command]:
    """-o (offering ``offered``) and --no-headers where a command's ``printing: Printing``
    parameter stands."""
    out = (Annotated[str | None, output_option(offered, default_help)], None)
    return flag_group(
        "printing",
        {"out": out, "no_headers": NO_HEADERS},
        functools.partial(Printing, offered=offered),
    )


LabelSelector = Annotated[
    str | None,
    typer.Option(
        "-l",
        "--selector",
        help="Label selector, kubectl's syntax: key=value, key!=value, 'key in (a,b)', "
        "'key notin (a)', key, !key (comma: and).",
        show_default=False,
    ),
]


def parsed_label_selector(text: str | None) -> Selector | None:
    """``-l`` parsed once (exit 2 when malformed): the server judges it where the command
    lists from the API, this matches it where rows are computed here."""
    if text is None:
        return None
    # kschedctl.model.filters on use: its package loads the filter engine (~0.15 s of start-up)
    from kschedctl.model.filters.selectors import SelectorError, parse_label_selector

    try:
        return parse_label_selector(text)
    except SelectorError as err:
        raise UsageError(f"-l {text}: {err}") from err


def parsed_field_selector(text: str | None) -> tuple[FieldRequirement, ...]:
    if text is None:
        return ()
    # on use, as for parsed_label_selector
    from kschedctl.model.filters.selectors import SelectorError, parse_field_selector

    try:
        return parse_field_selector(text)
    except SelectorError as err:
        raise UsageError(f"--field-selector {text}: {err}") from err


class Selectors(NamedTuple):
    """-l and --field-selector as given."""

    selector: str | None = None
    field_selector: str | None = None

    @property
    def given(self) -> bool:
        return self.selector is not None or self.field_selector is not None

    def parsed(self) -> tuple[Selector | None, tuple[FieldRequirement, ...]]:
        """Both parsed (exit 2 when one is malformed)."""
        return parsed_label_selector(self.selector), parsed_field_selector(self.field_selector)


DEFAULT_SELECTORS = Selectors()
# kubectl's -l and --field-selector, where a command's ``selectors: Selectors`` stands.
selector_flags = flag_group(
    "selectors",
    {
        "selector": (LabelSelector, None),
        "field_selector": flag(
            str | None,
            None,
            "--field-selector",
            "Field selector, kubectl's syntax: field=value, field!=value (comma: and).",
            show_default=False,
        ),
    },
    Selectors,
)

# --since DURATION (parsed by config.durations.parse_duration); the help says what it bounds.
Since = Annotated[
    str | None,
    typer.Option(
        "--since", help="Only lines newer than this duration (30s, 10m, 2h).", show_default=False
    ),
]
EventsSince = Annotated[
    str | None,
    typer.Option(
        "--since", help="Only events seen within this duration (30s, 10m, 2h).", show_default=False
    ),
]

KubernetesVersion = Annotated[
    str | None,
    typer.Option(
        "--kubernetes-version",
        help=(
            f"Target Kubernetes version, 1.X or 1.X.Y ({supported_minors()[0]}–"
            f"{supported_minors()[-1]}; default {DEFAULT_VERSION})."
        ),
        show_default=False,
    ),
]


def check_version_option(value: str | None) -> None:
    """An unsupported --kubernetes-version is a usage error (exit 2) with the reason."""
    if value is None:
        return
    try:
        parse_version(value)
    except ValueError as err:
        raise UsageError(
            f"--kubernetes-version {value}: {err}",
            hint=f"supported: {', '.join(supported_minors())}",
        ) from err


# --dry-run=none|client|server, kubectl's flag (k8s.io/kubectl pkg/cmd/util/helpers.go
# AddDryRunFlag / GetDryRunStrategy): a bare --dry-run is pflag's NoOptDefVal "unchanged",
# which current kubectl still takes as client, with a deprecation warning (as it takes
# --dry-run=true; --dry-run=false is none).
DRY_RUN_MODES = ("none", "client", "server")
_DRY_RUN_BARE = "unchanged"

DryRun = Annotated[
    str,
    typer.Option(
        "--dry-run",
        metavar="[none|client|server]",
        help="client: print what would be done, send nothing; server: the API server checks "
        "every request and changes nothing; none (default): do it. --dry-run alone is client.",
    ),
]


class DryRunCommand(TyperCommand):
    """A command whose --dry-run may stand alone, as with kubectl. click wants a value after an
    option that takes one, so a bare ``--dry-run`` becomes pflag's ``--dry-run=unchanged``,
    unless the next word is a mode: ``--dry-run client`` (deploy's spelling before) still
    means ``--dry-run=client``."""

    # typer.Context narrows click's Context; click always passes typer's here.
    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        cut = args.index("--") if "--" in args else len(args)
        head: list[str] = []
        i = 0
        while i < cut:
            if args[i] == "--dry-run":
                following = args[i + 1] if i + 1 < cut else None
                if following in DRY_RUN_MODES:
                    head.append(f"--dry-run={following}")
                    i += 2
                    continue
                head.append(f"--dry-run={_DRY_RUN_BARE}")
            else:
                head.append(args[i])
            i += 1
        return super().parse_args(ctx, head + args[cut:])


def checked_dry_run(value: str) -> str:
    """none, client or server for a --dry-run value, its deprecation warning (if any) printed."""
    mode, deprecated = dry_run_mode(value)
    if deprecated:
        output.warn(deprecated)
    return mode


def dry_run_mode(value: str) -> tuple[str, str | None]:
    """(none|client|server, a deprecation warning or None) for a --dry-run value; exit 2 for
    anything else (kubectl's message)."""
    if value in DRY_RUN_MODES:
        return value, None
    if value == _DRY_RUN_BARE:
        return "client", "--dry-run is deprecated and can be replaced with --dry-run=client."
    # strconv.ParseBool's spellings
    boolean = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
               "0": False, "f": False, "F": False, "FALSE": False, "false": False,
               "False": False}.get(value)  # fmt: skip
    if boolean is not None:
        mode = "client" if boolean else "none"
        return (
            mode,
            f"--dry-run={value} is deprecated (boolean value) and can be replaced with --dry-run={mode}.",
        )
    bad_choice(
        "--dry-run",
        value,
        DRY_RUN_MODES,
        f'Invalid dry-run value ({value}). Must be "none", "server", or "client".',
    )
