"""Pure modules stay pure: they never import typer, rich, click or the kubernetes client."""

from __future__ import annotations

import subprocess
import sys

PURE = [
    "kschedctl.config.versions",
    "kschedctl.config.schema",
    "kschedctl.config.plugin_args",
    "kschedctl.config.validation",
    "kschedctl.spec",
    "kschedctl.render.forms",
    "kschedctl.ops.validate",
    "kschedctl.render.workspace",
    # kschedctl's own scheduler: the algorithm and its loop reach the API only through the
    # SchedulerApi that kschedctl.k8s.scheduler_api implements.
    "kschedctl.scheduling.algorithm",
    "kschedctl.scheduling.cache",
    "kschedctl.scheduling.leader",
    "kschedctl.scheduling.loop",
    "kschedctl.scheduling.metrics",
    "kschedctl.scheduling.policy",
    "kschedctl.scheduling.queue",
    "kschedctl.scheduling.scoring",
    "kschedctl.scheduling.serving",
    "kschedctl.render.builtin",
]
FORBIDDEN = ("typer", "rich", "click", "kubernetes")


def test_pure_modules_import_no_cli_or_client_packages() -> None:
    probe = (
        "import importlib, sys\n"
        f"for name in {PURE!r}: importlib.import_module(name)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({FORBIDDEN!r})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"
