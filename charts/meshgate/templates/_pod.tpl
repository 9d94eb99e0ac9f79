{{/*
What every meshgate workload's pod template shares, from the global values and the workload's own. Call each with
(dict "ctx" $ "w" .Values.<workload> "component" "<component>").
*/}}

{{/*
Pod labels: the chart's (which the selectors use, so they always win), then the workload's podLabels, then the
global podLabels.
*/}}
{{- define "meshgate.podLabels" -}}
{{- $chart := include "meshgate.labels" .ctx | fromYaml -}}
{{- $_ := set $chart "app.kubernetes.io/component" .component -}}
{{- toYaml (merge $chart (.w.podLabels | default dict) (.ctx.Values.podLabels | default dict)) -}}
{{- end -}}

{{/* Pod annotations: `chart` (checksums, which always win), then the workload's podAnnotations, then the global ones. */}}
{{- define "meshgate.podAnnotations" -}}
{{- toYaml (merge (.chart | default dict) (.w.podAnnotations | default dict) (.ctx.Values.podAnnotations | default dict)) -}}
{{- end -}}

{{/*
topologySpreadConstraints, each without a labelSelector given the workload's own selector labels (the usual
intent: spread this workload's replicas).
*/}}
{{- define "meshgate.topologySpread" -}}
{{- $out := list -}}
{{- range (.w.topologySpreadConstraints | default list) -}}
{{- $c := deepCopy . -}}
{{- if not (hasKey $c "labelSelector") -}}
{{- $_ := set $c "labelSelector" (dict "matchLabels" (include "meshgate.selectorLabels" (dict "ctx" $.ctx "component" $.component) | fromYaml)) -}}
{{- end -}}
{{- $out = append $out $c -}}
{{- end -}}
{{- with $out }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The workload's extraArgs, appended after the chart's own (flags given twice: the last one counts). */}}
{{- define "meshgate.extraArgs" -}}
{{- range (.w.extraArgs | default list) }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* extraEnv (a list of EnvVar) appended to `env`. */}}
{{- define "meshgate.extraEnv" -}}
{{- with .w.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "meshgate.extraVolumeMounts" -}}
{{- with .w.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "meshgate.extraVolumes" -}}
{{- with .w.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}
