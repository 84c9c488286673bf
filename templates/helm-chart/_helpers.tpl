{{- /*
Written by `kschedctl render --as helm-chart`. Every value reaches the output through toJson
(scalars: a JSON string is a YAML string, whatever it holds) or toYaml (collections), never
spliced in as text, so no value can add a field or an object.
kschedctl-derived facts (RBAC rules and probes of the Kubernetes version) are in
files/kschedctl.yaml, the config kschedctl rendered in files/config.yaml; the settings are the
spec's fields, in values.yaml.
*/ -}}

{{- define "kschedctl.namespace" -}}
{{- .Values.namespace | default .Release.Namespace -}}
{{- end -}}

{{- define "kschedctl.leaseNamespace" -}}
{{- .Values.leaderElection.resourceNamespace | default (include "kschedctl.namespace" .) -}}
{{- end -}}

{{- define "kschedctl.leaseName" -}}
{{- .Values.leaderElection.resourceName | default .Values.name -}}
{{- end -}}

{{- define "kschedctl.derived" -}}
{{- .Files.Get "files/kschedctl.yaml" -}}
{{- end -}}

{{- /* helm.sh/chart as `helm create` writes it: NAME-VERSION, "+" replaced (a label value) */ -}}
{{- define "kschedctl.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- /* What the Deployment selects its pods by (and the metrics Service, the anti-affinity):
labels a release never changes, so not helm.sh/chart (a selector is immutable). */ -}}
{{- define "kschedctl.selectorLabels" -}}
app.kubernetes.io/name: {{ .Values.name | toJson }}
app.kubernetes.io/instance: {{ .Release.Name | toJson }}
{{- end -}}

{{- /* Helm's recommended labels (instance is the release, managed-by Helm) and kschedctl's own
mark, the scheduler's name: `kschedctl list`, `status` and `remove` find the objects by it. */ -}}
{{- define "kschedctl.labelMap" -}}
helm.sh/chart: {{ include "kschedctl.chart" . | toJson }}
{{ include "kschedctl.selectorLabels" . }}
app.kubernetes.io/component: scheduler
app.kubernetes.io/managed-by: {{ .Release.Service | toJson }}
kschedctl.io/scheduler: {{ .Values.name | toJson }}
{{- end -}}

{{- /* metadata.labels and .annotations of every object (what `kschedctl deploy` records) */ -}}
{{- define "kschedctl.meta" -}}
labels:
  {{- include "kschedctl.labelMap" . | nindent 2 }}
annotations:
  kschedctl.io/form: deployment
  {{- if .Values.leaderElection.leaderElect }}
  kschedctl.io/lease: {{ printf "%s/%s" (include "kschedctl.leaseNamespace" .) (include "kschedctl.leaseName" .) | toJson }}
  {{- end }}
{{- end -}}

{{- /* The same for the metrics objects (component metrics, as kschedctl labels them) */ -}}
{{- define "kschedctl.metricsMeta" -}}
{{- include "kschedctl.meta" . | replace "app.kubernetes.io/component: scheduler" "app.kubernetes.io/component: metrics" }}
{{- end -}}

{{- /* The same for the routing objects (component routing) */ -}}
{{- define "kschedctl.routingMeta" -}}
{{- include "kschedctl.meta" . | replace "app.kubernetes.io/component: scheduler" "app.kubernetes.io/component: routing" }}
{{- end -}}

{{- define "kschedctl.subject" -}}
- kind: ServiceAccount
  name: {{ .Values.name | toJson }}
  namespace: {{ include "kschedctl.namespace" . | toJson }}
{{- end -}}

{{- /* The KubeSchedulerConfiguration (kschedctl's Spec.scheduler_config) from the values. */ -}}
{{- define "kschedctl.model.config" -}}
{{- $v := .Values -}}
{{- $le := $v.leaderElection -}}
{{- $config := dict "apiVersion" "kubescheduler.config.k8s.io/v1" "kind" "KubeSchedulerConfiguration" -}}
{{- /* Optional settings: absent or null leaves kube-scheduler's default */ -}}
{{- if not (kindIs "invalid" $v.parallelism) }}{{ $_ := set $config "parallelism" $v.parallelism }}{{ end -}}
{{- if $le.leaderElect -}}
{{- $_ := set $config "leaderElection" (dict "leaderElect" true "resourceNamespace" (include "kschedctl.leaseNamespace" .) "resourceName" (include "kschedctl.leaseName" .) "leaseDuration" $le.leaseDuration "renewDeadline" $le.renewDeadline "retryPeriod" $le.retryPeriod) -}}
{{- else -}}
{{- $_ := set $config "leaderElection" (dict "leaderElect" false) -}}
{{- end -}}
{{- if $v.clientConnection }}{{ $_ := set $config "clientConnection" $v.clientConnection }}{{ end -}}
{{- range $key := list "percentageOfNodesToScore" "podInitialBackoffSeconds" "podMaxBackoffSeconds" -}}
{{- if and (hasKey $v $key) (not (kindIs "invalid" (index $v $key))) }}{{ $_ := set $config $key (index $v $key) }}{{ end -}}
{{- end -}}
{{- $_ := set $config "profiles" ($v.profiles | default list) -}}
{{- if $v.extenders }}{{ $_ := set $config "extenders" $v.extenders }}{{ end -}}
{{- /* kschedctl's own text while the values leave the config as rendered (the same text,
so the same config hash as `kschedctl render --as deployment`); Helm's YAML once they change it */ -}}
{{- $rendered := .Files.Get "files/config.yaml" -}}
{{- if eq (toJson (fromYaml $rendered)) (toJson $config) -}}
{{ $rendered }}
{{- else -}}
# KubeSchedulerConfiguration rendered by the kschedctl chart from values.yaml.
{{ toYaml $config }}
{{ end -}}
{{ end -}}
