{{/*
A label selector as a CEL expression over a map of labels, with the apiserver's semantics (matchLabels and every
matchExpressions requirement must hold; an empty selector selects everything). For admission policies that must
check what a webhook configuration's namespaceSelector selects (repair-eviction-policy.yaml).
  include "meshgate.selectorCel" (dict "selector" $sel "labels" "variables.labels")
*/}}
{{- define "meshgate.selectorCel" -}}
{{- $l := .labels -}}
{{- $terms := list -}}
{{- range $k, $v := (.selector.matchLabels | default dict) -}}
{{- $terms = append $terms (printf "(%s in %s && %s[%s] == %s)" (squote $k) $l $l (squote $k) (squote $v)) -}}
{{- end -}}
{{- range (.selector.matchExpressions | default list) -}}
{{- $key := squote .key -}}
{{- $values := list -}}
{{- range (.values | default list) }}{{ $values = append $values (squote .) }}{{ end -}}
{{- $in := printf "[%s]" (join ", " $values) -}}
{{- if eq .operator "In" -}}
{{- $terms = append $terms (printf "(%s in %s && %s[%s] in %s)" $key $l $l $key $in) -}}
{{- else if eq .operator "NotIn" -}}
{{- $terms = append $terms (printf "(!(%s in %s) || !(%s[%s] in %s))" $key $l $l $key $in) -}}
{{- else if eq .operator "Exists" -}}
{{- $terms = append $terms (printf "(%s in %s)" $key $l) -}}
{{- else if eq .operator "DoesNotExist" -}}
{{- $terms = append $terms (printf "!(%s in %s)" $key $l) -}}
{{- else -}}
{{- fail (printf "label selector operator %q is not one of In, NotIn, Exists, DoesNotExist" .operator) -}}
{{- end -}}
{{- end -}}
{{- if $terms }}({{ join " && " $terms }}){{ else }}true{{ end -}}
{{- end -}}
