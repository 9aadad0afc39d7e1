[[ header_tpl ]]
[[ helpers ]]
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
