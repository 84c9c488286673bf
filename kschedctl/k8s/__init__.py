"""The tool's cluster reads and writes, over :mod:`kschedctl.kubeclient`'s ``Cluster``; with it,
the only packages that import the kubernetes client (imported lazily, inside functions)."""
