[[ header_tpl ]]
{{/* The chart name. */}}
{{- define "azure-service-operator.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "azure-service-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select the controller pods. They never change between
versions: a selector change would break upgrades. */}}
{{- define "azure-service-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "azure-service-operator.name" . }}
control-plane: controller-manager
{{- end }}

{{/* Labels on every object. */}}
{{- define "azure-service-operator.labels" -}}
helm.sh/chart: {{ include "azure-service-operator.chart" . }}
{{ include "azure-service-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The ServiceAccount the controller runs as. */}}
{{- define "azure-service-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.name }}
{{- .Values.serviceAccount.name }}
{{- else if .Values.serviceAccount.create }}
{{- "azureserviceoperator-default" }}
{{- else }}
{{- "default" }}
{{- end }}
{{- end }}

{{/* Whether this install serves webhooks (everything but a multi-tenant
watchers-only tenant). Returns "true" or "". */}}
{{- define "azure-service-operator.servesWebhooks" -}}
{{- if or (not .Values.multitenant.enable) (eq .Values.azureOperatorMode "webhooks") }}true{{ end }}
{{- end }}

{{/* The rules guard: every broken rule of the rule table, reported with
its id and help through `fail`, so installs that skip the schema
(--skip-schema-validation, older tools) are refused too. */}}
{{- define "azure-service-operator.validateValues" -}}
{{- $replicas := int64 (.Values.replicaCount | default 0) }}
{{- $strategy := .Values.strategy | default dict }}
{{- $type := $strategy.type | default "Recreate" }}
{{- $gates := .Values.featureGates | default dict }}
{{- $gate := $gates.singleReplicaRollingUpdate | default false }}
{{- $hasRollingUpdate := hasKey $strategy "rollingUpdate" }}
{{- $broken := list }}
[% for rule in guard %]
{{- if [[ rule.condition ]] }}
{{- $broken = append $broken [[ rule.message | tojson ]] }}
{{- end }}
[% endfor %]
{{- if $broken }}
{{- fail (printf "values break %d rule(s) of azure-service-operator:\n%s" (len $broken) (join "\n" $broken)) }}
{{- end }}
{{- end }}
