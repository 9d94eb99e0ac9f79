{{/*
What every meshgate workload's pod template shares, from the global values and the workload's own. Call each with
(dict "ctx" $ "w" .Values.<workload> "component" "<component>").
*/}}

{{/*
Pod labels: the chart's (which the selectors use, so they always win), then the workload's podLabels, then the
global podLabels, then commonLabels.
*/}}
{{- define "meshgate.podLabels" -}}
{{- $chart := include "meshgate.chartLabels" .ctx | fromYaml -}}
{{- $_ := set $chart "app.kubernetes.io/component" .component -}}
{{- toYaml (merge $chart (.w.podLabels | default dict) (.ctx.Values.podLabels | default dict) (include "meshgate.commonLabels" .ctx | fromYaml)) -}}
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

{{/*
Where a workload's pods may run: its nodeSelector (over global.nodeSelector: pass "global" .Values.global), affinity
and tolerations values. An empty affinity means the
workload's default (`defaultAffinity`: the replicas' anti-affinity of the webhook and the repair controller);
one given replaces it whole. Call with (dict "w" .Values.<workload> "defaultAffinity" (dict ...)).
*/}}
{{- define "meshgate.placement" -}}
{{- with merge (deepCopy (.w.nodeSelector | default dict)) ((.global | default dict).nodeSelector | default dict) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.w.affinity | default .defaultAffinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .w.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
A workload's ServiceAccount, when it creates one. Call with (dict "ctx" $ "sa" .Values.<workload>.serviceAccount
"name" <its name> "component" "<component>").
*/}}
{{- define "meshgate.serviceAccount" -}}
{{- if .sa.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .name }}
  namespace: {{ .ctx.Release.Namespace }}
  {{- with include "meshgate.annotations" (dict "ctx" .ctx "own" .sa.annotations) }}{{ . | trim | nindent 2 }}{{ end }}
  labels:
    {{- include "meshgate.labels" .ctx | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
    {{- with omit (.sa.labels | default dict) "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/component" }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
automountServiceAccountToken: {{ ne .sa.automountServiceAccountToken false }}
{{- end }}
{{- end -}}

{{/* The default affinity of a workload with replicas: preferably one per node. Call with (dict "ctx" $ "component" ...). */}}
{{- define "meshgate.spreadReplicas" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "meshgate.selectorLabels" . | nindent 12 }}
{{- end -}}
