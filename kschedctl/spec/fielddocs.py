"""What each field of ``scheduler.yaml``'s ``spec`` means, for people: the JSON Schema's
``description`` (:mod:`kschedctl.render.schemas`), hence editors' hovers and the docs site's
file-format reference (``docs/reference/spec.md``). One entry per field of the
:class:`~kschedctl.spec.Spec` dataclasses that YAML carries; a test keeps the keys equal to the
fields."""

from __future__ import annotations

FIELD_DOCS: dict[str, str] = {
    "apiVersion": "Always kschedctl.io/v1alpha1.",
    "kind": "Always Scheduler.",
    "metadata": "The scheduler's identity.",
    "metadata.name": "The scheduler name: a DNS-1123 label; pods ask for it in spec.schedulerName.",
    "spec": "The scheduler's settings; every field is optional.",
    "spec.kubernetesVersion": (
        "The target Kubernetes version, 1.X or 1.X.Y (1.25–1.37; quote it: YAML reads 1.30 as 1.3)."
    ),
    "spec.namespace": "The namespace of the scheduler's objects and its Lease.",
    "spec.image": (
        'The scheduler image; "" means registry.k8s.io/kube-scheduler at the patch of '
        "kubernetesVersion."
    ),
    "spec.program": (
        "What runs: kube-scheduler, builtin (kschedctl's own scheduler) or custom (a "
        "kube-scheduler image with plugins of its own)."
    ),
    "spec.rbac": (
        "What the ServiceAccount is bound to (kschedctl.model.config.rbac): least privilege, or"
        " the built-in system:kube-scheduler and system:volume-scheduler roles."
    ),
    "spec.replicas": "Replicas of the deployment form (more than 1 requires leader election).",
    "spec.replacesDefault": (
        "Replace the cluster's default scheduler: serve default-scheduler from kube-system and "
        "hold the Lease kube-system/kube-scheduler."
    ),
    "spec.leaderElection": "Leader election on a Lease named after the scheduler.",
    "spec.leaderElection.leaderElect": (
        "Run with leader election on a Lease, so that one replica schedules at a time (required"
        " for replicas > 1)."
    ),
    "spec.leaderElection.resourceName": (
        "The Lease's name; \"\" means the scheduler's name (never the default scheduler's "
        "kube-scheduler, unless replacesDefault)."
    ),
    "spec.leaderElection.resourceNamespace": 'The Lease\'s namespace; "" means spec.namespace.',
    "spec.leaderElection.leaseDuration": (
        "How long a non-leader waits before it may take the Lease over (a Go duration)."
    ),
    "spec.leaderElection.renewDeadline": (
        "How long the leader keeps trying to renew before it stops leading (a Go duration; more"
        " than 1.2 × retryPeriod)."
    ),
    "spec.leaderElection.retryPeriod": (
        "How often to try to acquire or renew the Lease (a Go duration)."
    ),
    "spec.profiles": (
        "KubeSchedulerProfile v1 entries, passed through; one profile must be named like the "
        "scheduler."
    ),
    "spec.clientConnection": "The configuration's clientConnection (qps, burst).",
    "spec.parallelism": "The configuration's parallelism.",
    "spec.percentageOfNodesToScore": "The configuration's percentageOfNodesToScore.",
    "spec.podInitialBackoffSeconds": "The configuration's podInitialBackoffSeconds.",
    "spec.podMaxBackoffSeconds": "The configuration's podMaxBackoffSeconds.",
    "spec.extenders": "The configuration's extenders (Extender v1), passed through.",
    "spec.extraArgs": "Extra kube-scheduler command-line flags.",
    "spec.service": "The host forms (systemd service, static pod).",
    "spec.service.binary": "The kube-scheduler binary on the host.",
    "spec.service.configDir": (
        "Where the host forms write the configuration: <configDir>/<name>.yaml."
    ),
    "spec.service.kubeconfig": "The kubeconfig the scheduler reads on the host.",
    "spec.service.bindAddress": (
        "The address it serves health and metrics on (0.0.0.0 or the node's IP for a metrics "
        "Service over static pods)."
    ),
    "spec.service.securePort": (
        "The HTTPS port on the host; 10259 is the default scheduler's port on the same host, "
        "the next one is free."
    ),
    "spec.service.verbosity": "The scheduler's log verbosity (-v).",
    "spec.service.user": (
        "Whom service.kubeconfig authenticates as: the Lease RBAC of host-rbac.yaml binds this "
        "user."
    ),
    "spec.pod": "The in-cluster forms (pod, deployment).",
    "spec.pod.resources": "The scheduler container's resources (the static pod takes them too).",
    "spec.pod.nodeSelector": "The scheduler pod's nodeSelector.",
    "spec.pod.tolerations": "The scheduler pod's tolerations.",
    "spec.pod.priorityClassName": "The scheduler pod's priorityClassName.",
    "spec.pod.verbosity": "The scheduler's log verbosity (-v).",
    "spec.builtin": "program: builtin only: kschedctl's own scheduler.",
    "spec.builtin.strategy": (
        "How kschedctl's own scheduler ranks the nodes that fit: spread or binpack."
    ),
    "spec.builtin.policy": (
        "The fallback policy (fallbacks, strictPreferences), as in a --policy file "
        "(policy.schema.json)."
    ),
    "spec.builtin.metricsPort": (
        "The health and metrics port of the in-cluster forms; the host forms serve on "
        "service.securePort."
    ),
    "spec.builtin.plugins": (
        "Plugin files (--plugin), relative to the workspace (the directory of scheduler.yaml), "
        "in the order the scheduler runs them."
    ),
    "spec.custom": "program: custom only: a kube-scheduler image with plugins of its own.",
    "spec.custom.distribution": (
        'A known distribution (scheduler-plugins), its release read from the image tag; "" '
        "means read from the image when it is a known one."
    ),
    "spec.custom.binary": (
        "The scheduler's path inside the image; \"\" means the release's (scheduler-plugins: "
        "/bin/kube-scheduler), else kube-scheduler on the image's PATH."
    ),
    "spec.custom.plugins": (
        "The plugins the image adds (an image that is not a known distribution): name, "
        "extensionPoints, and the extra PolicyRules (rbac) they need."
    ),
    "spec.metrics": "Optional: let Prometheus scrape the scheduler.",
    "spec.metrics.service": "Render a headless Service NAME-metrics on the metrics port.",
    "spec.metrics.serviceMonitor": "Render a Prometheus Operator ServiceMonitor selecting it.",
    "spec.metrics.scraper": "Who scrapes /metrics.",
    "spec.metrics.scraper.namespace": "The namespace of the scraper's ServiceAccount.",
    "spec.metrics.scraper.serviceAccount": (
        'The scraper\'s ServiceAccount, granted get on /metrics; "" means no RBAC (the scraper '
        "has it already)."
    ),
    "spec.routing": (
        "Optional: send new pods to this scheduler without their manifests naming it (a "
        "MutatingAdmissionPolicy sets spec.schedulerName; Kubernetes 1.34+, GA in 1.36). A pod "
        "is routed when every part given matches; at least one must restrict."
    ),
    "spec.routing.namespaceSelector": (
        "A LabelSelector over namespaces (matchLabels, matchExpressions); {} means every "
        "namespace, on purpose. kube-system only with allowKubeSystem."
    ),
    "spec.routing.podSelector": "A LabelSelector over the pods' own labels.",
    "spec.routing.priorityClassNames": "Only pods of these priority classes (empty: any).",
    "spec.routing.includeNamedPods": (
        "Also route pods that name a scheduler other than default-scheduler (default: they "
        "keep the one they name)."
    ),
    "spec.routing.allowKubeSystem": (
        "Let the namespaceSelector match kube-system (only for a scheduler in kube-system)."
    ),
}
