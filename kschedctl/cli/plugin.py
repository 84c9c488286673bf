"""kschedctl as a kubectl plugin: ``kubectl sched …`` and its shell completion.

kubectl runs ``kubectl-sched`` from PATH with the arguments after ``kubectl sched`` and the
environment unchanged (its global flags are not allowed before a plugin's name), so the
plugin is the same CLI under the program name ``kubectl sched``.

For completion kubectl (>= 1.26) runs ``kubectl_complete-sched ARGS… WORD`` — the arguments
after ``kubectl sched``, the word being completed last (``""`` for a new word) — and reads one
candidate per line (``value<TAB>description``), then an optional ``:N`` line, cobra's
ShellCompDirective (k8s.io/kubectl v0.36.3 pkg/cmd/plugin/plugin_completion.go,
``pluginCompletion`` and ``getPluginCompletions``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

PROG = "kubectl sched"
COMPLETE_VAR = "_KUBECTL_SCHED_COMPLETE"
_SHELL = "kubectl"  # our completion "shell": the instruction is complete_kubectl

# cobra's ShellCompDirective values (github.com/spf13/cobra completions.go)
DIRECTIVE_DEFAULT = 0  # the shell completes file names
DIRECTIVE_NO_FILE_COMP = 4


def kubectl_sched() -> None:
    """The ``kubectl-sched`` executable."""
    # built on use: the whole CLI, as completion needs it
    from kschedctl.base.errors import called_as
    from kschedctl.cli import COMMANDS, app

    called_as(PROG, COMMANDS)  # hints and next steps say `kubectl sched …`
    app(prog_name=PROG, complete_var=COMPLETE_VAR)


def kubectl_complete_sched(argv: list[str] | None = None) -> None:
    """The ``kubectl_complete-sched`` executable."""
    from kschedctl.cli import app  # built on use, as above

    _register_completion_class(list(sys.argv[1:] if argv is None else argv))
    # typer's completion protocol: the instruction comes from the environment
    os.environ[COMPLETE_VAR] = f"complete_{_SHELL}"
    app(prog_name=PROG, complete_var=COMPLETE_VAR)


def _register_completion_class(words: list[str]) -> None:
    # typer ships its own copy of click (typer >= 0.20); its completion protocol takes
    # a class per shell, looked up by the name after complete_.
    from typer._click.shell_completion import ShellComplete, add_completion_class

    from kschedctl.base.errors import printable

    class KubectlComplete(ShellComplete):
        name = _SHELL
        source_template = ""  # kubectl itself is the shell side: nothing to source

        def source_vars(self) -> dict[str, Any]:
            return {}

        def get_completion_args(self) -> tuple[list[str], str]:
            if not words:
                return [], ""
            return words[:-1], words[-1]

        def format_completion(self, item: Any) -> str:
            help_text = printable(" ".join(str(item.help or "").split()), 200)
            return f"{item.value}\t{help_text}" if help_text else str(item.value)

        def complete(self) -> str:
            args, incomplete = self.get_completion_args()
            items = self.get_completions(args, incomplete)
            # one candidate per line: a value a line break or tab would split is left out
            plain = [
                item
                for item in items
                if item.type == "plain" and str(item.value).isprintable() and item.value != ""
            ]
            # no candidates (a free-form argument such as a file): the shell's file names,
            # like `complete -o default` in the kschedctl scripts
            directive = DIRECTIVE_NO_FILE_COMP if plain else DIRECTIVE_DEFAULT
            lines = [self.format_completion(item) for item in plain]
            return "\n".join([*lines, f":{directive}"])

    add_completion_class(KubectlComplete, _SHELL)
