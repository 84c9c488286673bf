"""The lab runner: a minimal kubelet for scheduler pods on simulated (kwok) nodes.

kwok only pretends to run containers. The runner watches pods bound to kwok nodes and, for each
container whose image is a scheduler it knows (:func:`~kschedctl.lab.images.program_for`),
really runs the program as a local process: volumes materialised under
``<lab>/pods/<ns>_<name>_<uid>/``, paths under mount points rewritten, the pod's ServiceAccount
token as credentials, the pod name as hostname (so leader-election identities look like a real
cluster's), output in CRI log format served by kwok (``kubectl logs``), readiness/liveness
probes, restarts with the kubelet's back-off, and pod status patched like a kubelet would.

Modules: ``programs`` (which images, which argv), ``podenv`` (env, ``$(VAR)``, path rewriting),
``volumes``, ``crilog``, ``probes``, ``spawn`` (hostname namespace, process records),
``container`` (one container's life), ``status`` (the pod status patch), ``worker`` (one pod),
``supervisor`` (watch loop, adoption after a crash, health endpoint)."""
