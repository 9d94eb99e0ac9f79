{{/*
Which namespaces meshgate guards, as CEL over a map of namespace labels, for the enforcement policy (issue 33 §6,
enforcement-policy.yaml): a namespace is guarded when a webhook entry that selects whole namespaces (no
objectSelector) selects it — the same entries the webhook configurations render (meshgate.webhookEntries), with each
entry's meshgate.io/enforcement requirement left out (the levels partition the namespaces, so together they select
what the entry without them does). Entries that select pods by their own labels are left out: in a namespace only
they select, a pod without the label is never reviewed, which is less than audit.
  include "meshgate.guardedCel" (dict "ctx" $ "labels" "variables.newLabels")
*/}}
{{- define "meshgate.guardedCel" -}}
{{- $terms := list -}}
{{- range (include "meshgate.webhookEntries" .ctx | fromJsonArray) -}}
{{- if not .objectSelector -}}
{{- $sel := deepCopy (.namespaceSelector | default dict) -}}
{{- $reqs := list -}}
{{- range ($sel.matchExpressions | default list) -}}
{{- if ne .key "meshgate.io/enforcement" -}}
{{- $reqs = append $reqs . -}}
{{- end -}}
{{- end -}}
{{- $_ := set $sel "matchExpressions" $reqs -}}
{{- $terms = append $terms (include "meshgate.selectorCel" (dict "selector" $sel "labels" $.labels)) -}}
{{- end -}}
{{- end -}}
{{- $terms = $terms | uniq -}}
{{- if $terms }}({{ join " || " $terms }}){{ else }}false{{ end -}}
{{- end -}}

{{/* The label keys the guarded-namespace test reads (for messages): the selectors' keys but the name and the level. */}}
{{- define "meshgate.guardedKeys" -}}
{{- $keys := list -}}
{{- range (include "meshgate.webhookEntries" . | fromJsonArray) -}}
{{- if not .objectSelector -}}
{{- range $k, $_ := (.namespaceSelector.matchLabels | default dict) }}{{ $keys = append $keys $k }}{{ end -}}
{{- range (.namespaceSelector.matchExpressions | default list) -}}
{{- if not (has .key (list "kubernetes.io/metadata.name" "meshgate.io/enforcement")) }}{{ $keys = append $keys .key }}{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $keys | uniq | sortAlpha | join ", " -}}
{{- end -}}

{{/*
Istio ambient (config.ambient.enabled): whether a namespace's labels enrol its pods in ambient mode, as CEL — any of
config.ambient.enablementSelectors (default Istio 1.27's, as src/config/defaults.ts; test/chart/guarded.test.ts holds
them equal) whose namespaceSelector narrows selects the namespace (a selector without one enrols pods by their own
labels, which a namespace label cannot change).
*/}}
{{- define "meshgate.ambientSelectors" -}}
{{- $set := (((.Values.config | default dict).ambient | default dict).enablementSelectors) -}}
{{- if kindIs "slice" $set -}}
{{- toJson $set -}}
{{- else -}}
[{"podSelector":{"matchLabels":{"istio.io/dataplane-mode":"ambient"}}},{"podSelector":{"matchExpressions":[{"key":"istio.io/dataplane-mode","operator":"NotIn","values":["none"]}]},"namespaceSelector":{"matchLabels":{"istio.io/dataplane-mode":"ambient"}}}]
{{- end -}}
{{- end -}}

{{- define "meshgate.ambientNamespaceCel" -}}
{{- $terms := list -}}
{{- range (include "meshgate.ambientSelectors" .ctx | fromJsonArray) -}}
{{- $ns := .namespaceSelector | default dict -}}
{{- if or $ns.matchLabels $ns.matchExpressions -}}
{{- $terms = append $terms (include "meshgate.selectorCel" (dict "selector" $ns "labels" $.labels)) -}}
{{- end -}}
{{- end -}}
{{- if $terms }}({{ join " || " ($terms | uniq) }}){{ else }}false{{ end -}}
{{- end -}}
