"""kubectl's connection flags as one value (:class:`Kube`), what a cluster command is given and
what a TAB's cluster lookup connects with; the flags themselves are declared in
:mod:`kschedctl.cli.kubeflags`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

from kschedctl.base.errors import UsageError, missing_file, shown_path

if TYPE_CHECKING:
    from kschedctl.kubeclient.kubeconfig import Overrides


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
