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

{{- define "meshgate.repairName" -}}
{{- printf "%s-repair-controller" (include "meshgate.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The usernames the apiserver gives each component's service account: what the admission policies match. */}}
{{- define "meshgate.webhookUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "meshgate.fullname" .) -}}
{{- end -}}

{{- define "meshgate.nodeAgentUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "meshgate.nodeAgentName" .) -}}
{{- end -}}

{{- define "meshgate.repairUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "meshgate.repairName" .) -}}
{{- end -}}

{{/* Both webhook configurations share this name (different kinds); the webhook's RBAC names it. */}}
{{- define "meshgate.webhookConfigName" -}}
{{- include "meshgate.fullname" . -}}
{{- end -}}

{{- define "meshgate.tlsSecretName" -}}
{{- printf "%s-tls" (include "meshgate.fullname" .) -}}
{{- end -}}

{{/* The admission mark's key (docs/security.md): made by the webhook unless admissionMark.create is false. */}}
{{- define "meshgate.markSecretName" -}}
{{- .Values.admissionMark.secretName | default (printf "%s-admission-mark" (include "meshgate.fullname" .)) -}}
{{- end -}}

{{/*
The Secret's volume and its mount, shared by the webhook and the repair controller (read from files: no API call on
the admission path). Optional: the Secret does not exist before the webhook first starts; the kubelet adds its files
at its next sync of the pod (about a minute), and both re-read them every 10 s.
*/}}
{{- define "meshgate.markVolume" -}}
- name: admission-mark
  secret:
    secretName: {{ include "meshgate.markSecretName" . }}
    optional: true
{{- end -}}

{{- define "meshgate.markVolumeMount" -}}
- name: admission-mark
  mountPath: /etc/meshgate/admission-mark
  readOnly: true
{{- end -}}

{{- define "meshgate.certificateName" -}}
{{- printf "%s-serving" (include "meshgate.fullname" .) -}}
{{- end -}}

{{/* cert-manager mode without an issuerRef: the chart's CA, its Secret and the Issuer that signs with it. */}}
{{- define "meshgate.caName" -}}
{{- printf "%s-ca" (include "meshgate.fullname" .) -}}
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

{{/* Call with (dict "ctx" $ "path" "/mutate"). caBundle stays empty: meshgate (self-managed) or cert-manager fills it. */}}
{{- define "meshgate.webhookClientConfig" -}}
clientConfig:
  service:
    name: {{ include "meshgate.fullname" .ctx }}
    namespace: {{ .ctx.Release.Namespace }}
    path: {{ .path }}
    port: 443
{{- end -}}

{{/*
Pod Security "restricted" fields, shared by every meshgate workload: .Values.podSecurityContext and
.Values.containerSecurityContext (values.yaml holds the restricted defaults). A key set to null is left out, so
OpenShift can assign the UID and GID from the namespace's range (runAsUser: null, runAsGroup: null).
*/}}
{{- define "meshgate.containerSecurityContext" -}}
{{- with .Values.containerSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "meshgate.podSecurityContext" -}}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
