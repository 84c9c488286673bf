"""kschedctl's own scheduler (``kschedctl scheduler run``): kube-scheduler's filters and
default scores (with a selectable resource strategy), fallback steps for pods no node fits,
then kube-scheduler's DefaultPreemption (:mod:`kschedctl.model.filters.preemption`, the code ``why``
runs too).

The algorithm is pure and works on plain dicts:

- :mod:`.algorithm` — one decision: the filters of :mod:`kschedctl.model.filters` (``why`` runs the
  same code), the ranking of :mod:`.scoring`, then, only when no node fits, the steps of the
  fallback policy, and when none of them fits either, preemption (a node to nominate and the
  victims to evict); :mod:`.explain` shows every stage and every plugin verdict for ``why``;
- :mod:`.policy` — the fallback policy and what each step relaxes; :mod:`.policyload` reads
  and checks it (a file, a pod annotation);
- :mod:`.scoring` — kube-scheduler's default score plugins and weights (the resource one
  by strategy), PreScore work once per decision, deterministic ties;
- :mod:`.strategies` — ``STRATEGIES``, the one table of scoring strategies (``spread``,
  ``binpack``), name → resource scorer;
- :mod:`.plugins` — Python plugins (``filter``/``score``/``pre_filter`` in a file or module):
  read-only views of the snapshot, running them contained; :mod:`.pluginload` loads them
  and refuses the unusable ones;
- :mod:`.queue` — priority/age ordering, backoff, unschedulable pods waiting for a change;
- :mod:`.cache` — nodes, pods, volumes, services and controllers and PodDisruptionBudgets
  from the watches, slimmed (:mod:`.slim`), with assumed and nominated pods;
- :mod:`.leader` — Lease leader election as a state machine; :mod:`.campaign` runs it;
- :mod:`.metrics` — Prometheus text format.

:mod:`.loop` runs it all with threads (:mod:`.reporting` writes events, conditions and
evictions off the decision path) against a ``SchedulerApi`` (implemented in
``kschedctl.k8s.scheduler_api``, the only part that talks to the API server) and
:mod:`.serving` answers ``/healthz``, ``/readyz`` and ``/metrics``. Nothing here imports the
kubernetes client.
"""
