"""`kschedctl diff`: what `deploy` would change, per object and host file; changes nothing.

The workflow is :func:`kschedctl.ops.diff.diff`; this module parses flags and prints.
"""

from __future__ import annotations

import typer

from kschedctl.base.errors import EXIT_DIFF_ERROR, EXIT_ERROR, KschedError
from kschedctl.cli import output, registers
from kschedctl.cli.common import connect
from kschedctl.cli.deployflags import DEFAULT_TARGET, Source, Target, target_flags
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags_without_as
from kschedctl.cli.paths import guard_paths

EXIT_DIFFERENT = 1  # kubectl diff's convention: 0 the same, 1 differences, >1 an error


@guard_paths
@target_flags
@kube_flags_without_as
def diff_command(src: Source, target: Target = DEFAULT_TARGET, kube: Kube = DEFAULT_KUBE) -> None:
    """Show what deploy would change: a unified diff per object (LIVE against MERGED, from a
    server-side dry-run apply) and per host file, Secrets' values masked.

    Exits 0 when nothing would change and 1 when something would (as kubectl diff); errors
    exit with their own codes, and 8 for those that exit 1 elsewhere. Nothing is changed.
    """
    # Imported here: the use case pulls in the cluster, host and render layers, which
    # `kschedctl --help` and the offline commands must not pay for.
    from kschedctl import hosts
    from kschedctl.cli.diff_view import print_diff
    from kschedctl.ops.diff import diff
    from kschedctl.ops.reporter import Reporter

    report = Reporter(done=output.echo, info=output.info, warn=output.warn)
    try:
        request = target.request(src)
        host = hosts.for_target(kube.kubeconfig, target.root, target.manifests_dir)
        with connect(kube) as cluster:
            result = diff(cluster, host, request, report)
    except KschedError as err:
        if err.exit_code == EXIT_ERROR:  # never read as "differences" by a script
            err.exit_code = EXIT_DIFF_ERROR
        raise
    print_diff(result)
    if result.differs:
        raise typer.Exit(EXIT_DIFFERENT)


register = registers("diff", diff_command)
