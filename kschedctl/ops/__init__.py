"""Use cases, one module per command workflow: plain arguments in, a result dataclass out.

Each takes a :class:`~kschedctl.kubeclient.client.Cluster` (and, for the host forms, a
:class:`~kschedctl.hosts.Host`), reports progress through callbacks
(:class:`~kschedctl.ops.reporter.Reporter`), raises :mod:`kschedctl.base.errors` types and never
prints: they are callable as a library (``from kschedctl.ops.deploy import deploy``).

Import rule: ops modules import what they use at module level, ``kschedctl.k8s`` included;
``kschedctl.cli`` imports an ops module only inside the command body that calls it. An ops
module costs ~0.2 s to import (render, hosts, the lab), and the kubernetes client more on
connect, which ``kschedctl --help`` and the offline commands must not pay.
"""
