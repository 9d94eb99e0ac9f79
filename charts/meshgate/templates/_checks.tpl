{{/*
What values.schema.json cannot say clearly: an image that does not exist is refused at install with a sentence,
the same rule meshgate's loader applies at startup (src/config/semantics.ts placeholderImage), so the chart never
renders a placeholder. Called by the ConfigMap template. Call with (dict "key" "config.proxy.image" "image" ...).
*/}}
{{- define "meshgate.checkImage" -}}
{{- $img := .image | toString -}}
{{- $ref := regexReplaceAll "@.*$" $img "" -}}
{{- $repo := regexReplaceAll ":[^/]*$" $ref "" -}}
{{- $why := "" -}}
{{- if regexMatch "^\\s*$" $img -}}
{{- $why = "is not set" -}}
{{- else if regexMatch "(?i)[<>{}]|changeme|replace[-_]?me" $img -}}
{{- $why = printf "%q is a placeholder" $img -}}
{{- else if has $repo (list "ghcr.io/meshgate/proxy" "ghcr.io/meshgate/proxy-init") -}}
{{- $why = printf "%q names an image that was never published" $img -}}
{{- else if regexMatch "^(registry\\.example|example\\.(com|org|net)|[^/]*\\.example)(/|$)" $repo -}}
{{- $why = printf "%q is on an example registry" $img -}}
{{- end -}}
{{- if $why -}}
{{- fail (printf "%s: %s; set the image this mesh really runs" .key $why) -}}
{{- end -}}
{{- end -}}

{{- define "meshgate.checkValues" -}}
{{- $cfg := .Values.config | default dict -}}
{{- range $role := list "proxy" "init" "validator" -}}
{{- $c := get $cfg $role | default dict -}}
{{- if or (hasKey $c "image") (and (eq $.Values.mesh "custom") (ne $role "validator")) -}}
{{- include "meshgate.checkImage" (dict "key" (printf "config.%s.image" $role) "image" ($c.image | default "")) -}}
{{- end -}}
{{- end -}}
{{- include "meshgate.checkServiceAccounts" . -}}
{{- include "meshgate.checkKubeVersion" . -}}
{{- end -}}

{{/* A duration of the schema's form (100ms, 15s, 1.5m, 2h) in milliseconds. */}}
{{- define "meshgate.durationMs" -}}
{{- $n := regexFind "^[0-9]+(\\.[0-9]+)?" . | float64 -}}
{{- $unit := regexReplaceAll "^[0-9.]+" . "" -}}
{{- mulf $n (get (dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000) $unit) -}}
{{- end -}}

{{/* The repair controller refuses to start unless retryPeriod < renewDeadline < leaseDuration: say so at install. */}}
{{- define "meshgate.checkLeaderElection" -}}
{{- $le := .Values.repairController.leaderElection -}}
{{- $retry := include "meshgate.durationMs" $le.retryPeriod | float64 -}}
{{- $renew := include "meshgate.durationMs" $le.renewDeadline | float64 -}}
{{- $lease := include "meshgate.durationMs" $le.leaseDuration | float64 -}}
{{- if not (and (lt $retry $renew) (lt $renew $lease)) -}}
{{- fail (printf "repairController.leaderElection: retryPeriod (%s) < renewDeadline (%s) < leaseDuration (%s) must hold, so a leader stops acting before another replica may take over" $le.retryPeriod $le.renewDeadline $le.leaseDuration) -}}
{{- end -}}
{{- end -}}

{{/*
The admission policies grant each workload's rights to its service account by name: refuse a name that would hand
them to other pods — "default" (every pod of the namespace without its own), or one shared by two workloads — and
create=false without a name (it would silently become "default").
*/}}
{{- define "meshgate.checkServiceAccounts" -}}
{{- $seen := dict -}}
{{- range $w := list "webhook" "nodeAgent" "repairController" "uninstall" -}}
{{- $sa := (get $.Values $w).serviceAccount -}}
{{- if and (not $sa.create) (not $sa.name) -}}
{{- fail (printf "%s.serviceAccount.name is required when %s.serviceAccount.create is false: meshgate's admission policies and roles name it" $w $w) -}}
{{- end -}}
{{- $name := include (printf "meshgate.%sServiceAccount" (get (dict "webhook" "webhook" "nodeAgent" "nodeAgent" "repairController" "repair" "uninstall" "uninstall") $w)) $ -}}
{{- if eq $name "default" -}}
{{- fail (printf "%s.serviceAccount.name: \"default\" is every pod's service account in the namespace; meshgate's admission policies would grant them the %s's rights" $w $w) -}}
{{- end -}}
{{- if hasKey $seen $name -}}
{{- fail (printf "%s.serviceAccount.name: %q is also the service account of %s; each workload needs its own (the admission policies grant rights by it)" $w $name (get $seen $name)) -}}
{{- end -}}
{{- $_ := set $seen $name $w -}}
{{- end -}}
{{- end -}}

{{/*
Kubernetes 1.32 or later (docs/install.md, "Requirements"), checked here rather than by Chart.yaml's kubeVersion so
the refusal says why, and what to pass to `helm template`, which renders for a version of its own unless told.
*/}}
{{- define "meshgate.checkKubeVersion" -}}
{{- if not (semverCompare ">=1.32.0-0" .Capabilities.KubeVersion.Version) -}}
{{- fail (printf "meshgate needs Kubernetes 1.32 or later, and this renders for %s. Why: its ValidatingAdmissionPolicies hold each node agent to its own Node by the node name that pod-bound service-account tokens carry (GA in 1.32) and compare Nodes with CEL's transformMap (1.32). helm install and helm upgrade use the cluster's version; helm template and helm lint use helm's built-in default unless given --kube-version: pass your cluster's, e.g. --kube-version 1.32.0" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- end -}}
