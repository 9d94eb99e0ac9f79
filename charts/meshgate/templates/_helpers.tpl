{{/*
Names. nameOverride replaces the chart's name (in names and in the app.kubernetes.io/name label, which selectors use:
set it before the first install); fullnameOverride replaces the whole prefix of every object. The Service is named
fullname: meshgate's default TLS SAN is <fullname>.<namespace>.svc.
*/}}
{{- define "meshgate.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "meshgate.fullname" -}}
{{- $name := .Values.nameOverride | default .Chart.Name -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
A workload's name: the full name cut so that its suffix always survives (63 characters in all), or a long
release name would give two workloads, and their service accounts, the same name.
*/}}
{{- define "meshgate.nodeAgentName" -}}
{{- printf "%s-node-agent" (include "meshgate.fullname" . | trunc 52 | trimSuffix "-") -}}
{{- end -}}

{{- define "meshgate.repairName" -}}
{{- printf "%s-repair-controller" (include "meshgate.fullname" . | trunc 45 | trimSuffix "-") -}}
{{- end -}}

{{- define "meshgate.uninstallName" -}}
{{- printf "%s-uninstall" (include "meshgate.fullname" . | trunc 53 | trimSuffix "-") -}}
{{- end -}}

{{/*
Each workload's service account: <workload>.serviceAccount.name, else the workload's own name. The admission
policies grant rights by these names (meshgate.*User below), so _checks.tpl refuses "default", a name shared by two
workloads, and create=false without a name.
*/}}
{{- define "meshgate.webhookServiceAccount" -}}
{{- .Values.webhook.serviceAccount.name | default (include "meshgate.fullname" .) -}}
{{- end -}}

{{- define "meshgate.nodeAgentServiceAccount" -}}
{{- .Values.nodeAgent.serviceAccount.name | default (include "meshgate.nodeAgentName" .) -}}
{{- end -}}

{{- define "meshgate.repairServiceAccount" -}}
{{- .Values.repairController.serviceAccount.name | default (include "meshgate.repairName" .) -}}
{{- end -}}

{{- define "meshgate.uninstallServiceAccount" -}}
{{- .Values.uninstall.serviceAccount.name | default (include "meshgate.uninstallName" .) -}}
{{- end -}}

{{/* The usernames the apiserver gives each component's service account: what the admission policies match. */}}
{{- define "meshgate.webhookUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "meshgate.webhookServiceAccount" .) -}}
{{- end -}}

{{- define "meshgate.nodeAgentUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "meshgate.nodeAgentServiceAccount" .) -}}
{{- end -}}

{{- define "meshgate.repairUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "meshgate.repairServiceAccount" .) -}}
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

{{/* The chart's own labels. */}}
{{- define "meshgate.chartLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "meshgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Labels of every object: the chart's, then commonLabels (the schema keeps those off the chart's own keys). */}}
{{- define "meshgate.labels" -}}
{{ include "meshgate.chartLabels" . }}
{{- with include "meshgate.commonLabels" . | fromYaml }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* commonLabels over global.commonLabels, without the chart's own keys (a parent's global cannot replace them). */}}
{{- define "meshgate.commonLabels" -}}
{{- $global := omit ((.Values.global | default dict).commonLabels | default dict) "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/version" "app.kubernetes.io/managed-by" "app.kubernetes.io/component" "helm.sh/chart" -}}
{{- toYaml (merge (deepCopy (.Values.commonLabels | default dict)) $global) -}}
{{- end -}}

{{/*
metadata.annotations of every object: commonAnnotations, then the object's own (`own`, which win: hooks,
cert-manager's CA injection). Nothing when both are empty. Call with (dict "ctx" $) or (dict "ctx" $ "own" (dict ...)).
*/}}
{{- define "meshgate.annotations" -}}
{{- with merge (deepCopy (.own | default dict)) (.ctx.Values.commonAnnotations | default dict) }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Selector labels; call with (dict "ctx" $ "component" "webhook"). */}}
{{- define "meshgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "meshgate.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* registry/repository:tag (or @digest); the registry is image.registry, else global.imageRegistry, else none. */}}
{{- define "meshgate.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- $registry := .Values.image.registry | default ((.Values.global | default dict).imageRegistry) | default "" | trimSuffix "/" -}}
{{- $repo := ternary (printf "%s/%s" $registry .Values.image.repository) .Values.image.repository (ne $registry "") -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repo .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}
{{- end -}}

{{/* imagePullSecrets: global.imagePullSecrets (objects or bare names), then the chart's own; nothing when none. */}}
{{- define "meshgate.imagePullSecrets" -}}
{{- $out := list -}}
{{- range (concat ((.Values.global | default dict).imagePullSecrets | default list) (.Values.imagePullSecrets | default list)) -}}
{{- $out = append $out (ternary (dict "name" .) . (kindIs "string" .)) -}}
{{- end -}}
{{- with $out | uniq }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* revisionHistoryLimit of a workload (`w`), else global's; nothing when neither is set. Call with (dict "ctx" $ "w" ...). */}}
{{- define "meshgate.revisionHistoryLimit" -}}
{{- $v := .w.revisionHistoryLimit -}}
{{- if kindIs "invalid" $v }}{{ $v = (.ctx.Values.global | default dict).revisionHistoryLimit }}{{ end -}}
{{- if not (kindIs "invalid" $v) }}
revisionHistoryLimit: {{ $v }}
{{- end }}
{{- end -}}

{{/*
A probe: the chart's handler (`handler`, a dict) with the timing values of `p` (enabled: false drops it). Call with
(dict "name" "readinessProbe" "handler" (dict "httpGet" ...) "p" .Values.<workload>.readinessProbe).
*/}}
{{- define "meshgate.probe" -}}
{{- $p := .p | default dict -}}
{{- if ne $p.enabled false }}
{{ .name }}:
  {{- toYaml (merge (deepCopy .handler) (omit $p "enabled")) | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The pod's automountServiceAccountToken when the workload sets one (null: the ServiceAccount's). */}}
{{- define "meshgate.automountToken" -}}
{{- if not (kindIs "invalid" .automountServiceAccountToken) }}
automountServiceAccountToken: {{ .automountServiceAccountToken }}
{{- end }}
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

{{/*
`helm uninstall`: once helm has deleted the release, a post-delete Job runs `meshgate uninstall`, which removes what
meshgate made at run time and helm never knew (values.yaml "uninstall", docs/install.md "Uninstalling").
Why after the delete and not before it: by then the webhook configurations are gone (a pod recreated from here on is
not pinned again), the node agents and the repair controller are stopped or stopping (the command waits for their
pods, so none writes a verdict again), and the node admission policies are gone, so removing meshgate's keys from
Nodes needs no exemption in them. Its ServiceAccount and roles are hook objects too (created first, weight -10),
deleted with the Job when it succeeds; a failed Job stays for its logs and is replaced at the next attempt.
*/}}
{{- define "meshgate.uninstallHook" -}}
helm.sh/hook: post-delete
helm.sh/hook-weight: "-10"
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}

{{/* enforcement.admins in words, for the enforcement policy's message: "group system:masters or user alice". */}}
{{- define "meshgate.enforcementAdmins" -}}
{{- $who := list -}}
{{- range .Values.enforcement.admins.groups }}{{ $who = append $who (printf "group %s" .) }}{{ end -}}
{{- range .Values.enforcement.admins.users }}{{ $who = append $who (printf "user %s" .) }}{{ end -}}
{{- if .Values.enforcement.breakGlass.enabled }}{{ $who = append $who (printf "break-glass account %s/%s" .Release.Namespace (include "meshgate.breakGlassName" .)) }}{{ end -}}
{{- if $who }}{{ join " or " $who }}{{ else }}nobody (enforcement.admins is empty){{ end -}}
{{- end -}}
