{{/*
Interactive access to the mesh's containers (issue 33 §1, src/policy/validate/access.ts, docs/security.md "Interactive
access"). The names a mesh container may carry: every profile's reserved names (src/mesh/index.ts RESERVED_NAMES)
and the configured ones (config.proxy.name, init.name, validator.name), as a JSON list; test/chart/access.test.ts
holds it equal to meshContainerNames() of the compiled configuration.
*/}}
{{- define "meshgate.meshContainerNames" -}}
{{- $names := list "istio-proxy" "istio-init" "istio-validation" "linkerd-proxy" "linkerd-init" "linkerd-network-validator" "meshgate-proxy" "meshgate-init" "meshgate-validate" -}}
{{- $cfg := .Values.config | default dict -}}
{{- range $role := list "proxy" "init" "validator" -}}
{{- with (get $cfg $role | default dict).name -}}
{{- $names = append $names . -}}
{{- end -}}
{{- end -}}
{{- $names | uniq | toJson -}}
{{- end -}}

{{/*
The validating entries for kubectl exec and attach: one per namespace entry of meshgate.webhookEntries (an entry with
an objectSelector cannot see a CONNECT: its options carry no pod labels) and level, calling the same route. The match
condition sends only a CONNECT that names a mesh container or none (then the apiserver picks the pod's only one, which
may be a gateway's proxy): exec into app containers never waits on meshgate, nor fails while it is down. The webhook
posts an Event on the pod for each access it judges (sideEffects NoneOnDryRun: a CONNECT is never a dry run).
webhook.matchConditions are not applied here: they are written for pods, and a CONNECT's object is its options.
Call with the chart's context; renders list items for the ValidatingWebhookConfiguration's webhooks.
*/}}
{{- define "meshgate.connectWebhooks" -}}
{{- $names := include "meshgate.meshContainerNames" . | fromJsonArray -}}
{{- range (include "meshgate.webhookEntries" . | fromJsonArray) }}
{{- if not .objectSelector }}
- name: {{ .name }}.connect.meshgate.io
  {{- include "meshgate.webhookClientConfig" (dict "ctx" $ "path" (printf "/validate%s" .route)) | nindent 2 }}
  rules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CONNECT"]
      resources: ["pods/exec", "pods/attach"]
      scope: Namespaced
  namespaceSelector:
    {{- toYaml .namespaceSelector | nindent 4 }}
  matchConditions:
    - name: mesh-containers-only
      expression: {{ printf "object.?container.orValue('') in %s" (prepend $names "" | toJson) | quote }}
  {{- /* Audit entries fail open with their own short timeout, as every audit entry (_webhooks.tpl). */}}
  failurePolicy: {{ include "meshgate.entryFailurePolicy" (dict "ctx" $ "entry" . "kind" "validating") }}
  matchPolicy: Equivalent
  sideEffects: NoneOnDryRun
  timeoutSeconds: {{ include "meshgate.entryTimeout" (dict "ctx" $ "entry" .) }}
  admissionReviewVersions: ["v1"]
{{- end }}
{{- end }}
{{- end -}}
