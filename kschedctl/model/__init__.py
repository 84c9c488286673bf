"""The kube-scheduler model (pure, no I/O): KubeSchedulerConfiguration rules (:mod:`.config`),
the scheduler's data model and filters (:mod:`.filters`) and kschedctl's own scheduling
algorithm (:mod:`.scheduling`); :mod:`.kubetypes` holds the Kubernetes shapes they read.
Imports only :mod:`kschedctl.base` and :mod:`kschedctl._generated`."""
