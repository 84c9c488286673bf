"""kschedctl: run more than one scheduler in a Kubernetes cluster."""

__version__ = "0.1.0"
