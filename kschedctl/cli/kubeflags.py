"""kubectl's connection flags (cli-runtime's set) as one flag group: a cluster command takes
them as ``kube: Kube`` (``@kube_flags``) and opens its connection with ``common.connect(kube)``.
"""

from __future__ import annotations

from kschedctl.cli import completers
from kschedctl.cli.kube import kube_from
from kschedctl.cli.options import Flag, flag, flag_group

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
