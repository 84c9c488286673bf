"""What ``-h`` says about each command beyond its own help text: the panel it is listed in,
its one-line summary and its examples — one table, keyed by the command's words.

tests/cli/test_help.py parses every example with the real CLI parser (every flag exists,
every value is one the option accepts) and checks every visible command has an entry.
"""

from __future__ import annotations

OFFLINE = "Offline Commands"
CLUSTER = "Cluster Commands"
TROUBLESHOOTING = "Troubleshooting Commands"
OWN = "Own Scheduler Commands"
LAB = "Lab Commands"
OTHER = "Other Commands"
PANELS = (OFFLINE, CLUSTER, TROUBLESHOOTING, OWN, LAB, OTHER)

Example = tuple[str, str]  # what it does, the command line

# command words → (panel, one-line summary, examples)
HELP: dict[str, tuple[str, str, tuple[Example, ...]]] = {
    "create": (OFFLINE, "Write a scheduler workspace: scheduler.yaml and every form", (
        ("Write ./my-scheduler/ with every rendered form", "kschedctl create my-scheduler"),
        ("Two replicas with leader election, for Kubernetes 1.35",
         "kschedctl create my-scheduler --replicas 2 --kubernetes-version 1.35"),
        ("kschedctl's own scheduler instead of kube-scheduler",
         "kschedctl create my-scheduler --program builtin"),
        ("Send new pods of namespaces labelled team=ml to it (spec.routing)",
         "kschedctl create binpack --route-namespace-label team=ml"),
    )),
    "render": (OFFLINE, "Print one rendered form of a scheduler (or write an export)", (
        ("The Deployment form, applied with kubectl",
         "kschedctl render my-scheduler --as deployment | kubectl apply -f -"),
        ("The KubeSchedulerConfiguration of a workspace", "kschedctl render ./my-scheduler --as config"),
        ("A Helm chart written to ./charts/my-scheduler",
         "kschedctl render ./my-scheduler --as helm-chart ./charts/my-scheduler"),
    )),
    "validate": (OFFLINE, "Check specs and KubeSchedulerConfiguration files", (
        ("Check a workspace's spec", "kschedctl validate ./my-scheduler/scheduler.yaml"),
        ("Check a config for Kubernetes 1.34, as JSON for CI",
         "kschedctl validate config.yaml --kubernetes-version 1.34 -o json"),
    )),
    "schema": (OFFLINE, "Print the JSON Schema of scheduler.yaml, a policy or a snapshot", (
        ("The schema of scheduler.yaml, for an editor", "kschedctl schema spec > scheduler.schema.json"),
        ("The schema of a cluster snapshot", "kschedctl schema snapshot"),
    )),
    "deploy": (CLUSTER, "Deploy a scheduler and wait until it serves", (
        ("Deploy a workspace as a Deployment and prove it with a canary pod",
         "kschedctl deploy ./my-scheduler"),
        ("Deploy a scheduler with every default, without waiting", "kschedctl deploy my-scheduler --no-wait"),
        ("Show what would be applied, change nothing",
         "kschedctl deploy ./my-scheduler --dry-run client"),
        ("Print what changes, then deploy 3 replicas",
         "kschedctl deploy ./my-scheduler --as-deployment --replicas 3 --diff"),
    )),
    "diff": (CLUSTER, "Show what deploy would change (exit 1 if anything)", (
        ("What deploying the workspace as a Deployment would change",
         "kschedctl diff ./my-scheduler --as-deployment"),
        ("The change a new image makes, as a CI gate (exit 0: none)",
         "kschedctl diff ./my-scheduler --as-deployment --image example.org/sched:v2"),
        ("The static pod manifest against the one on this host",
         "kschedctl diff ./my-scheduler --as-static-pod --root /"),
    )),
    "history": (CLUSTER, "The revisions deploy recorded for a scheduler", (
        ("The revisions of one scheduler", "kschedctl history my-scheduler"),
        ("The last three, with their overrides and hashes", "kschedctl history my-scheduler --max 3 -o wide"),
    )),
    "rollback": (CLUSTER, "Deploy a recorded revision again and wait until it serves", (
        ("Back to the revision before the current one", "kschedctl rollback my-scheduler"),
        ("Back to revision 2, showing what would be applied", "kschedctl rollback my-scheduler 2 --dry-run client"),
    )),
    "remove": (CLUSTER, "Remove what kschedctl deployed for a scheduler", (
        ("Remove a scheduler and its Lease", "kschedctl remove my-scheduler"),
        ("Show what would be deleted", "kschedctl remove my-scheduler --dry-run client"),
    )),
    "list": (CLUSTER, "Every scheduler in the cluster: health, leader, Pending pods", (
        ("The schedulers of the current context", "kschedctl list"),
        ("As JSON, then keep watching", "kschedctl list -o json -w"),
    )),
    "status": (CLUSTER, "One scheduler in depth: objects, leader, RBAC, metrics", (
        ("The state of one scheduler", "kschedctl status my-scheduler"),
        ("As YAML, without reading its metrics", "kschedctl status my-scheduler --no-metrics -o yaml"),
    )),
    "why": (TROUBLESHOOTING, "Explain why a pod is Pending, node by node", (
        ("Why the pod web-0 is Pending", "kschedctl why web-0 -n team-a"),
        ("Every failing filter on every node", "kschedctl why web-0 -n team-a --all-reasons --nodes all"),
        ("Every Pending pod of the cluster", "kschedctl why --all -A"),
    )),
    "events": (TROUBLESHOOTING, "The events a scheduler reported, oldest first", (
        ("The events of one scheduler", "kschedctl events my-scheduler"),
        ("Only failures about one pod, then keep watching",
         "kschedctl events my-scheduler --for pod/web-0 --types Warning -w"),
        ("Decisions per minute over the last half hour", "kschedctl events my-scheduler --timeline --since 30m"),
    )),
    "logs": (TROUBLESHOOTING, "A scheduler's logs: every replica, merged, leader marked", (
        ("The logs of every replica", "kschedctl logs my-scheduler"),
        ("Follow the last 20 lines of each replica", "kschedctl logs my-scheduler -f --tail 20"),
    )),
    "top": (TROUBLESHOOTING, "What the pods on each node request, per scheduler", (
        ("Requests per node, split by scheduler", "kschedctl top nodes"),
    )),
    "top nodes": (TROUBLESHOOTING, "Requests per node, split by scheduler", (
        ("Requests per node, split by scheduler", "kschedctl top nodes"),
        ("The nodes one scheduler used, busiest CPU first",
         "kschedctl top nodes --scheduler my-scheduler --sort-by cpu"),
    )),
    "snapshot": (TROUBLESHOOTING, "Write a portable, read-only snapshot of a cluster", (
        ("Snapshot the current cluster", "kschedctl snapshot -f cluster.json"),
        ("Without names, labels or images that identify it",
         "kschedctl snapshot --anonymize -f cluster.json"),
    )),
    "simulate": (TROUBLESHOOTING, "Compare candidate schedulers on a copy of a snapshot", (
        ("Compare a spec with the cluster's own scheduler",
         "kschedctl simulate cluster.json --scheduler ./my-scheduler/scheduler.yaml"),
        ("Fail when the candidate leaves more pods pending (for CI)",
         "kschedctl simulate cluster.json --scheduler scheduler.yaml --fail-if-worse"),
    )),
    "scheduler": (OWN, "kschedctl's own scheduler: filters, scoring, fallback", (
        ("Run the scheduler named my-scheduler with the kubeconfig's credentials",
         "kschedctl scheduler run --name my-scheduler"),
    )),
    "scheduler run": (OWN, "Run kschedctl's own scheduler in this process", (
        ("Serve pods that ask for my-scheduler, packing nodes",
         "kschedctl scheduler run --name my-scheduler --strategy binpack"),
        ("Two replicas elect a leader on a Lease", "kschedctl scheduler run --name my-scheduler --leader-elect"),
    )),
    "lab": (LAB, "A real local control plane with simulated nodes", (
        ("Build the binaries once, then start a lab", "kschedctl lab build && kschedctl lab up"),
    )),
    "lab build": (LAB, "Build the lab's binaries from their Go modules (cached)", (
        ("Build once (Go >= 1.26)", "kschedctl lab build"),
        ("Rebuild even if cached", "kschedctl lab build --force"),
    )),
    "lab up": (LAB, "Start a lab: etcd, kube-apiserver, controllers, kwok nodes", (
        ("A lab with 4 nodes", "kschedctl lab up --nodes 4"),
        ("With official release binaries from DIR", "kschedctl lab up --bin-dir ./bin"),
    )),
    "lab down": (LAB, "Stop a lab and delete its state", (
        ("Stop the default lab", "kschedctl lab down"),
    )),
    "lab status": (LAB, "Whether a lab runs, and its components", (
        ("The lab's components", "kschedctl lab status"),
        ("As JSON", "kschedctl lab status -o json"),
    )),
    "lab env": (LAB, "Print the KUBECONFIG export for a lab", (
        ("Point kubectl at the lab", 'eval "$(kschedctl lab env)"'),
    )),
    "completion": (OTHER, "Print a shell completion script (bash, zsh, fish, powershell)", (
        ("Complete in every new bash (a line for ~/.bashrc)", "source <(kschedctl completion bash)"),
        ("In zsh (a directory of your $fpath)", 'kschedctl completion zsh > "${fpath[1]}/_kschedctl"'),
        ("In fish", "kschedctl completion fish > ~/.config/fish/completions/kschedctl.fish"),
        ("In PowerShell, for this session", "kschedctl completion powershell | Out-String | Invoke-Expression"),
    )),
    "version": (OTHER, "Print the client's version, and the server's and schedulers' skew", (
        ("Client, server and every scheduler's version skew", "kschedctl version"),
        ("Only the client (no cluster needed)", "kschedctl version --client"),
        ("As JSON", "kschedctl version -o json"),
    )),
}  # fmt: skip


def examples(path: str) -> tuple[Example, ...]:
    return HELP[path][2] if path in HELP else ()


def summary(path: str) -> str | None:
    return HELP[path][1] if path in HELP else None


def panel(path: str) -> str:
    return HELP[path][0] if path in HELP and " " not in path else "Commands"


def panel_order(title: str) -> int:
    return PANELS.index(title) if title in PANELS else len(PANELS)


def spelled(line: str, prog: str) -> str:
    """An example as the user called us: ``kubectl sched …`` as a kubectl plugin."""
    return line.replace("kschedctl ", f"{prog} ") if prog != "kschedctl" else line
