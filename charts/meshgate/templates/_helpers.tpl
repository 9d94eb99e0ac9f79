{{/* Names. The Service is named fullname: meshgate's default TLS SAN is meshgate.<namespace>.svc. */}}
{{- define "meshgate.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "meshgate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "meshgate.nodeAgentName" -}}
{{- printf "%s-node-agent" (include "meshgate.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Both webhook configurations share this name (different kinds); the webhook's RBAC names it. */}}
{{- define "meshgate.webhookConfigName" -}}
{{- include "meshgate.fullname" . -}}
{{- end -}}

{{- define "meshgate.tlsSecretName" -}}
{{- printf "%s-tls" (include "meshgate.fullname" .) -}}
{{- end -}}

{{- define "meshgate.certificateName" -}}
{{- printf "%s-serving" (include "meshgate.fullname" .) -}}
{{- end -}}

{{- define "meshgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "meshgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels; call with (dict "ctx" $ "component" "webhook"). */}}
{{- define "meshgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "meshgate.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "meshgate.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* Namespaces neither webhook ever sees: meshgate's own (so it can never block its own pods) and the system ones. */}}
{{- define "meshgate.excludedNamespaces" -}}
{{- $ns := list .Release.Namespace -}}
{{- range (.Values.config.systemNamespaces | default list) -}}
{{- $ns = append $ns . -}}
{{- end -}}
{{- toJson (uniq $ns) -}}
{{- end -}}

{{/* Shared by both webhook configurations. */}}
{{- define "meshgate.namespaceSelector" -}}
namespaceSelector:
  matchExpressions:
    - key: meshgate.io/inject
      operator: In
      values: ["enabled"]
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ include "meshgate.excludedNamespaces" . }}
{{- end -}}

{{/*
Pods opting in with the label meshgate.io/inject=true in namespaces that are not labelled but carry
config.injection.podOptInNamespaceLabels. The selectors do the filtering (meshgate trusts them, it does not
watch Namespaces); labelled namespaces are left to the main entry so no pod is reviewed twice.
*/}}
{{- define "meshgate.optInSelectors" -}}
namespaceSelector:
  matchLabels: {{ toJson .labels }}
  matchExpressions:
    - key: meshgate.io/inject
      operator: NotIn
      values: ["enabled"]
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ include "meshgate.excludedNamespaces" .ctx }}
objectSelector:
  matchLabels:
    meshgate.io/inject: "true"
{{- end -}}

{{/* Call with (dict "ctx" $ "path" "/mutate"). caBundle stays empty: meshgate (self-managed) or cert-manager fills it. */}}
{{- define "meshgate.webhookClientConfig" -}}
clientConfig:
  service:
    name: {{ include "meshgate.fullname" .ctx }}
    namespace: {{ .ctx.Release.Namespace }}
    path: {{ .path }}
    port: 443
{{- end -}}

{{/* The config file meshgate reads: .Values.config plus what only the chart knows. */}}
{{- define "meshgate.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- $_ := set $cfg "meshNamespace" .Release.Namespace -}}
{{- $validator := deepCopy ($cfg.validator | default dict) -}}
{{- if not $validator.image -}}
{{- $_ := set $validator "image" (include "meshgate.image" .) -}}
{{- end -}}
{{- $_ := set $cfg "validator" $validator -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* Pod Security "restricted" container fields, shared by the webhook and the node agent. */}}
{{- define "meshgate.containerSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: ["ALL"]
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{- define "meshgate.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
{{- end -}}
