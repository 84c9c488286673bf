"""kubectl's connection flags (cli-runtime's set) as one flag group: a cluster command takes
them as ``kube: Kube`` (``@kube_flags``) and opens its connection with ``common.connect(kube)``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

from kschedctl.base.errors import UsageError, missing_file, shown_path
from kschedctl.cli import completers
from kschedctl.cli.options import Flag, flag, flag_group

if TYPE_CHECKING:
    from kschedctl.kubeclient.kubeconfig import Overrides

KUBECONFIG = flag(
    str | None,
    None,
    "--kubeconfig",
    "Path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config).",
)
CONTEXT = flag(
    str | None,
    None,
    "--context",
    "The kubeconfig context to use.",
    autocompletion=completers.contexts,
)


class Kube(NamedTuple):
    """kubectl's connection flags (cli-runtime's ``ConfigFlags``) as one value: the
    kubeconfig's --kubeconfig, --context, --cluster and --user, then the overrides
    (--server, --certificate-authority, --insecure-skip-tls-verify, --token, --as, --as-group,
    --request-timeout) and -v. ``connect(kube)`` (cli/common.py) opens it."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster_name: str | None = None
    user: str | None = None
    server: str | None = None
    certificate_authority: str | None = None
    insecure_skip_tls_verify: bool = False
    token: str | None = None
    as_user: str | None = None
    as_group: tuple[str, ...] = ()
    request_timeout: str | None = None
    verbosity: str | None = None

    def overrides(self) -> Overrides:
        """The overrides checked (exit 2 for a bad --request-timeout, or a CA with
        --insecure-skip-tls-verify, as kubectl refuses it; 5 for a missing CA file)."""
        from kschedctl.kubeclient.kubeconfig import Overrides  # pure: no client loaded

        if self.insecure_skip_tls_verify and self.certificate_authority:
            raise UsageError(
                "--certificate-authority and --insecure-skip-tls-verify contradict each other",
                hint="pass one of them: the CA to check the server, or skip the check",
            )
        if self.certificate_authority and not os.path.isfile(self.certificate_authority):
            raise missing_file(
                f"--certificate-authority {shown_path(self.certificate_authority)}: no such file",
                hint="pass the path of the CA certificate (PEM) that signed the API server's",
            )
        if self.as_group and self.as_user is None:
            raise UsageError(
                "--as-group needs --as: the API server impersonates groups only with a user",
                hint="add --as USER",
            )
        return Overrides(
            server=self.server,
            certificate_authority=self.certificate_authority,
            insecure_skip_tls_verify=self.insecure_skip_tls_verify,
            token=self.token,
            impersonate=self.as_user,
            impersonate_groups=tuple(self.as_group),
            request_timeout=request_timeout(self.request_timeout),
        )

    def level(self) -> int:
        """-v's level (exit 2 if not a whole number); kubectl's ``-v=6`` spelling too."""
        return verbosity_level(self.verbosity)


def request_timeout(text: str | None) -> float | None:
    """--request-timeout in seconds, kubectl's syntax: 0 (no limit), a whole number of
    seconds, or a duration (30s, 1m, 1m30s, 500ms); ``None`` when not given."""
    if text is None:
        return None
    value = text.strip()
    if value.isdigit():
        return float(value)
    from kschedctl.model.config.durations import parse_duration  # on use, as parsed_*

    return parse_duration(value, "--request-timeout")


def verbosity_level(text: str | None) -> int:
    if text is None:
        return 0
    value = text.removeprefix("=")  # -v=6: click reads the short option's value as "=6"
    if not value.isdigit():
        raise UsageError(
            f"-v {text}: the log level is a whole number", hint="-v 6 shows every request"
        )
    return int(value)


def kube_from(**given: Any) -> Kube:
    return Kube(**{**given, "as_group": tuple(given.get("as_group") or ())})


DEFAULT_KUBE = Kube()  # no flag given: $KUBECONFIG or ~/.kube/config, its current context
_KUBECONFIG_FLAGS: dict[str, Flag] = {
    "kubeconfig": KUBECONFIG,
    "context": CONTEXT,
    "cluster_name": flag(
        str | None,
        None,
        "--cluster",
        "The kubeconfig cluster to use (instead of the context's).",
        autocompletion=completers.clusters,
    ),
    "user": flag(
        str | None,
        None,
        "--user",
        "The kubeconfig user to use (instead of the context's).",
        autocompletion=completers.users,
    ),
    "server": flag(
        str | None,
        None,
        ("-s", "--server"),
        "The API server's address and port (instead of the kubeconfig cluster's).",
        show_default=False,
    ),
    "certificate_authority": flag(
        str | None,
        None,
        "--certificate-authority",
        "Path to a CA certificate file to check the API server with.",
        metavar="FILE",
        show_default=False,
    ),
    "insecure_skip_tls_verify": flag(
        bool,
        False,
        "--insecure-skip-tls-verify",
        "Do not check the API server's certificate (its connection is then open to anyone "
        "on the path).",
    ),
    "token": flag(
        str | None,
        None,
        "--token",
        "Bearer token for the API server (instead of the kubeconfig user's credentials).",
        show_default=False,
    ),
}
_IMPERSONATION_FLAGS: dict[str, Flag] = {
    "as_user": flag(
        str | None,
        None,
        "--as",
        "Username to impersonate for the operation (a user or system:serviceaccount:NS:NAME).",
        metavar="USER",
        show_default=False,
    ),
    "as_group": flag(
        list[str] | None,
        None,
        "--as-group",
        "Group to impersonate for the operation; repeat for several.",
        metavar="GROUP",
        show_default=False,
    ),
}
_REQUEST_FLAGS: dict[str, Flag] = {
    "request_timeout": flag(
        str | None,
        None,
        "--request-timeout",
        "How long to wait for each answer of the API server: 0 (no limit), 30s, 1m "
        "(default 30s; watches and log streams wait as long as they must).",
        metavar="DURATION",
        show_default=False,
    ),
    "verbosity": flag(
        str | None,
        None,
        ("-v", "--v", "--verbosity"),
        "Log level: 6 and up print each request to stderr (method, URL, status, time; "
        "never a header).",
        metavar="N",
        show_default=False,
    ),
}
# kubectl's connection flags, where a command's ``kube: Kube`` parameter stands.
kube_flags = flag_group(
    "kube", {**_KUBECONFIG_FLAGS, **_IMPERSONATION_FLAGS, **_REQUEST_FLAGS}, kube_from
)
# deploy: its --as names the form it deploys (as render's does), so no impersonation there
kube_flags_without_as = flag_group("kube", {**_KUBECONFIG_FLAGS, **_REQUEST_FLAGS}, kube_from)
