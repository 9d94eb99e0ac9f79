{{/*
Which requests reach meshgate: a list of entries {name, namespaceSelector, objectSelector}, rendered into both
webhook configurations (one webhook per entry). The entries are disjoint, so no pod is reviewed twice:
  istio   mirrors istiod's own sidecar-injector entries (istio-discovery chart, mutatingwebhook.yaml), plus
          meshgate's label, with one precedence: meshgate.io/inject=enabled, else istio-injection=enabled, else
          istio.io/rev (namespace), else in a namespace with none of these the pod labels sidecar.istio.io/inject=true
          or istio.io/rev. Unlike istiod, pods labelled sidecar.istio.io/inject=false are NOT left out: meshgate
          must see them to refuse the opt-out (config.injection.allowPodOptOut).
  linkerd Linkerd opts in with an annotation (linkerd.io/inject), which selectors cannot see: meshgate's
  custom  namespace label only.
*/}}
{{- define "meshgate.profileSelectors" -}}
{{- $unlabelled := include "meshgate.unlabelledNamespace" . | fromYamlArray -}}
- name: ns-meshgate
  namespaceSelector:
    matchExpressions:
      - {key: meshgate.io/inject, operator: In, values: [enabled]}
{{- if eq .Values.mesh "istio" }}
- name: ns-istio-injection
  namespaceSelector:
    matchExpressions:
      - {key: meshgate.io/inject, operator: NotIn, values: [enabled]}
      - {key: istio-injection, operator: In, values: [enabled]}
- name: ns-istio-rev
  namespaceSelector:
    matchExpressions:
      - {key: meshgate.io/inject, operator: NotIn, values: [enabled]}
      - {key: istio-injection, operator: DoesNotExist}
      - {key: istio.io/rev, operator: Exists}
- name: pod-istio-inject
  namespaceSelector:
    matchExpressions: {{ toJson $unlabelled }}
  objectSelector:
    matchExpressions:
      - {key: sidecar.istio.io/inject, operator: In, values: ["true"]}
      - {key: istio.io/rev, operator: DoesNotExist}
- name: pod-istio-rev
  namespaceSelector:
    matchExpressions: {{ toJson $unlabelled }}
  objectSelector:
    matchExpressions:
      - {key: istio.io/rev, operator: Exists}
{{- end }}
{{- end -}}

{{/* Namespaces none of the profile's namespace entries selects (where pod-level opt-in applies). */}}
{{- define "meshgate.unlabelledNamespace" -}}
- {key: meshgate.io/inject, operator: NotIn, values: [enabled]}
{{- if eq .Values.mesh "istio" }}
- {key: istio-injection, operator: DoesNotExist}
- {key: istio.io/rev, operator: DoesNotExist}
{{- end }}
{{- end -}}

{{/*
config.injection.podOptInNamespaceLabels: pods labelled meshgate.io/inject=true in namespaces carrying those labels
that no namespace entry selects; with istio, not pods that istiod's own pod-level entries (above) already send.
*/}}
{{- define "meshgate.podOptInSelector" -}}
- name: pod-optin
  namespaceSelector:
    matchLabels: {{ toJson .labels }}
    matchExpressions: {{ include "meshgate.unlabelledNamespace" .ctx | fromYamlArray | toJson }}
  objectSelector:
    matchExpressions:
      - {key: meshgate.io/inject, operator: In, values: ["true"]}
{{- if eq .ctx.Values.mesh "istio" }}
      - {key: sidecar.istio.io/inject, operator: NotIn, values: ["true"]}
      - {key: istio.io/rev, operator: DoesNotExist}
{{- end }}
{{- end -}}

{{/*
The entries as JSON (read back with fromJsonArray): webhook.selectors or the profile's, the pod opt-in entry, and
on every namespaceSelector the exclusion of the release namespace and config.systemNamespaces, so meshgate can
never block its own pods or the system's, whatever the selectors say.
Each entry also gets the path suffix of its admission scope (src/admission/handlers.ts): "" for an entry that sends
every pod of the namespaces it selects (meshgate marks the pods it admits there: meshgate.io/admitted), and
"/selected-pods" for one with an objectSelector or when webhook.matchConditions are set — the pod's author could
then create other pods there that meshgate never sees, with a mark copied from an admitted one, so none is marked.
Then each entry becomes one per enforcement level (src/admission/level.ts), named <name> for enforce and
<name>-warn, <name>-audit: its namespaceSelector also requires the label meshgate.io/enforcement to name that level —
for the default level (config.enforcement.default), to name neither other level, so it also selects namespaces
without the label — and its route ends in the level ("" for enforce, "/warn", "/audit"). The levels partition the
namespaces, so the entries stay disjoint, and the apiserver tells meshgate each review's level by the path it calls:
no namespace cache. The enforce entries keep the names entries had before levels: an upgrade from such a release
(which keeps enforce) keeps its entries, and the caBundle the webhook wrote into them, which helm's merge keeps by
entry name — renamed ones would start without it and refuse every pod until the webhook patched them.
*/}}
{{- define "meshgate.webhookEntries" -}}
{{- $entries := .Values.webhook.selectors | default list -}}
{{- if not $entries -}}
{{- $entries = include "meshgate.profileSelectors" . | fromYamlArray -}}
{{- end -}}
{{- with ((.Values.config | default dict).injection | default dict).podOptInNamespaceLabels -}}
{{- $entries = concat $entries (include "meshgate.podOptInSelector" (dict "ctx" $ "labels" .) | fromYamlArray) -}}
{{- end -}}
{{- $excluded := (include "meshgate.profile" . | fromJson).excludedNamespaces -}}
{{- $default := include "meshgate.enforcementDefault" . -}}
{{- $levels := list "enforce" "warn" "audit" -}}
{{- $out := list -}}
{{- range $e := $entries -}}
{{- $ns := deepCopy (.namespaceSelector | default dict) -}}
{{- $exclusion := dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" $excluded -}}
{{- $_ := set $ns "matchExpressions" (append ($ns.matchExpressions | default list) $exclusion) -}}
{{- $scope := "" -}}
{{- if or .objectSelector $.Values.webhook.matchConditions -}}
{{- $scope = "/selected-pods" -}}
{{- end -}}
{{- range $level := $levels -}}
{{- $sel := deepCopy $ns -}}
{{- $requirement := dict "key" "meshgate.io/enforcement" "operator" "In" "values" (list $level) -}}
{{- if eq $level $default -}}
{{- $requirement = dict "key" "meshgate.io/enforcement" "operator" "NotIn" "values" (without $levels $level) -}}
{{- end -}}
{{- $_ := set $sel "matchExpressions" (append $sel.matchExpressions $requirement) -}}
{{- $route := printf "%s%s" $scope (ternary "" (printf "/%s" $level) (eq $level "enforce")) -}}
{{- $name := ternary $e.name (printf "%s-%s" $e.name $level) (eq $level "enforce") -}}
{{- $entry := dict "name" $name "namespaceSelector" $sel "scope" $scope "level" $level "route" $route -}}
{{- with $e.objectSelector -}}
{{- $_ := set $entry "objectSelector" . -}}
{{- end -}}
{{- $out = append $out $entry -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
The validating entries' own matchCondition: a pod UPDATE reaches meshgate only when it changes the spec (container
images, scheduling directives of gated pods, tolerations...), a label or an annotation — everything that decides
what runs, under which identity, and how it is redirected. Not sent: UPDATEs of only other metadata, i.e. the
garbage collector's and controllers' finalizer and ownerReference changes (the Job controller removes its tracking
finalizer from every Job pod). Status is a subresource the rules never select; CREATEs, bindings and
pods/ephemeralcontainers are always sent.
*/}}
{{- define "meshgate.updateMatchCondition" -}}
name: skip-routine-pod-updates
expression: >-
  request.operation != 'UPDATE' || request.?subResource.orValue('') != '' ||
  object.spec != oldObject.spec ||
  object.metadata.?labels.orValue({}) != oldObject.metadata.?labels.orValue({}) ||
  object.metadata.?annotations.orValue({}) != oldObject.metadata.?annotations.orValue({})
{{- end -}}

{{/*
failurePolicy and timeoutSeconds of an entry (docs/security.md, "failurePolicy"). Entries of the audit level always
fail open (Ignore), with their own short timeout (webhook.audit.timeoutSeconds): audit refuses nothing, so neither
may an outage or a slow meshgate refuse, delay beyond that budget or hold a pod there that would run without
meshgate. Every other entry takes webhook.mutating/validating.failurePolicy and webhook.timeoutSeconds.
  include "meshgate.entryFailurePolicy" (dict "ctx" $ "entry" . "kind" "mutating")
*/}}
{{- define "meshgate.entryFailurePolicy" -}}
{{- if eq .entry.level "audit" -}}
Ignore
{{- else -}}
{{- index .ctx.Values.webhook .kind "failurePolicy" -}}
{{- end -}}
{{- end -}}

{{- define "meshgate.entryTimeout" -}}
{{- if eq .entry.level "audit" -}}
{{- .ctx.Values.webhook.audit.timeoutSeconds -}}
{{- else -}}
{{- .ctx.Values.webhook.timeoutSeconds -}}
{{- end -}}
{{- end -}}

{{/*
The workload entries of the validating configuration (issue 34 §3, src/admission/workload.ts): one per pod entry and
level, with that entry's namespaceSelector, sending CREATEs and UPDATEs of Deployments, StatefulSets, DaemonSets,
ReplicaSets, ReplicationControllers, Jobs and CronJobs (and webhook.workloads.extraRules) to
/validate/workloads[/warn|/audit], so the person applying one reads meshgate's refusal (enforce) or warning (warn,
audit) with the fix. A pod entry's objectSelector (pods opting in by their own labels) becomes a match condition on
the template's labels: a workload's own labels are not its pods'. UPDATEs that leave the spec alone (the garbage
collector's finalizers, label edits) are not sent. They always fail open, with webhook.workloads.timeoutSeconds:
pods stay the enforcement point, and a workload refused only because meshgate is down would be an outage that
protects nothing.
*/}}
{{- define "meshgate.workloadRules" -}}
- apiGroups: ["apps"]
  apiVersions: ["v1"]
  operations: ["CREATE", "UPDATE"]
  resources: ["deployments", "statefulsets", "daemonsets", "replicasets"]
  scope: Namespaced
- apiGroups: ["batch"]
  apiVersions: ["v1"]
  operations: ["CREATE", "UPDATE"]
  resources: ["jobs", "cronjobs"]
  scope: Namespaced
- apiGroups: [""]
  apiVersions: ["v1"]
  operations: ["CREATE", "UPDATE"]
  resources: ["replicationcontrollers"]
  scope: Namespaced
{{- range .Values.webhook.workloads.extraRules }}
- apiGroups: {{ toJson .apiGroups }}
  apiVersions: {{ toJson .apiVersions }}
  operations: ["CREATE", "UPDATE"]
  resources: {{ toJson .resources }}
  scope: Namespaced
{{- end }}
{{- end -}}

{{/* The labels of a workload's pod template, in CEL over the request (a CronJob's sit one level deeper). */}}
{{- define "meshgate.templateLabelsCel" -}}
(request.resource.resource == 'cronjobs' ? object.spec.?jobTemplate.?spec.?template.?metadata.?labels.orValue({}) : object.spec.?template.?metadata.?labels.orValue({}))
{{- end -}}

{{- define "meshgate.workloadEntries" -}}
{{- $labels := include "meshgate.templateLabelsCel" . -}}
{{- range (include "meshgate.webhookEntries" . | fromJsonArray) }}
- name: {{ .name }}.workloads.meshgate.io
  {{- include "meshgate.webhookClientConfig" (dict "ctx" $ "path" (printf "/validate/workloads%s" (ternary "" (printf "/%s" .level) (eq .level "enforce")))) | nindent 2 }}
  rules:
    {{- include "meshgate.workloadRules" $ | nindent 4 }}
  namespaceSelector:
    {{- toYaml .namespaceSelector | nindent 4 }}
  matchConditions:
    - name: pod-template-changed
      expression: request.operation != 'UPDATE' || object.spec != oldObject.spec
    {{- with .objectSelector }}
    - name: pod-template-labels
      expression: {{ include "meshgate.selectorCel" (dict "selector" . "labels" $labels) | quote }}
    {{- end }}
    {{- with $.Values.webhook.matchConditions }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  failurePolicy: Ignore
  matchPolicy: Equivalent
  sideEffects: None
  timeoutSeconds: {{ $.Values.webhook.workloads.timeoutSeconds }}
  admissionReviewVersions: ["v1"]
{{- end }}
{{- end -}}
