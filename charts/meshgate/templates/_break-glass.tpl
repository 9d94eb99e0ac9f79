{{/*
Break-glass (docs/security.md, "Break-glass"): on clusters whose admins are in no group enforcement.admins can
name (EKS access entries, GKE IAM, AKS Entra ID bindings are authorized outside RBAC groups), lowering a level needs
an identity the enforcement policy knows. enforcement.breakGlass renders one: the ServiceAccount
<fullname>-break-glass in the release namespace, one of the admins, allowed by RBAC to patch namespaces and by its
own admission policy to change nothing but their label meshgate.io/enforcement. Nobody holds its token; whoever
may impersonate it acts as it (`kubectl … --as=system:serviceaccount:NS:NAME`): enforcement.breakGlass.subjects
(a Role in the release namespace), and whoever may already impersonate any ServiceAccount (cluster admins, and the
release namespace's admins, who can change meshgate itself anyway). Every use is in the apiserver's audit log with
the real user, the impersonated account and the policy's audit annotation.
*/}}
{{- define "meshgate.breakGlassName" -}}
{{- printf "%s-break-glass" (include "meshgate.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "meshgate.breakGlassUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "meshgate.breakGlassName" .) -}}
{{- end -}}

{{/* enforcement.admins.users, with the break-glass ServiceAccount when it is rendered: as JSON. */}}
{{- define "meshgate.enforcementAdminUsers" -}}
{{- $users := .Values.enforcement.admins.users | default list -}}
{{- if .Values.enforcement.breakGlass.enabled -}}
{{- $users = append $users (include "meshgate.breakGlassUser" .) -}}
{{- end -}}
{{- toJson $users -}}
{{- end -}}
