{{/*
What the chart must know of each mesh profile besides the config file: the CNI plugin type the node agent checks,
the validation container's name, and the exit codes with which validators report missing redirection (meshgate's
validate-redirect 42; Istio's istio-validation 126, tools/istio-iptables ValidationErrorCode; Linkerd's
linkerd-network-validator 95, linkerd-reinitialize-pods). The first two mirror src/config/defaults.ts and the codes
src/repair/failed/failures.ts: test/chart/config.test.ts holds the chart to both.
*/}}
{{- define "meshgate.profileDefaults" -}}
istio:
  pluginType: istio-cni
  validatorName: istio-validation
  failureExitCodes: [42, 126]
linkerd:
  pluginType: linkerd-cni
  validatorName: linkerd-network-validator
  failureExitCodes: [42, 95]
custom:
  pluginType: ""
  validatorName: meshgate-validate
  failureExitCodes: [42]
{{- end -}}

{{/*
The effective facts as JSON (read back with fromJson): the profile's defaults with the config's overrides, and the
namespaces meshgate never sees (the release namespace and config.systemNamespaces).
*/}}
{{- define "meshgate.profile" -}}
{{- $p := get (include "meshgate.profileDefaults" . | fromYaml) .Values.mesh -}}
{{- $cfg := .Values.config | default dict -}}
{{- $cni := $cfg.cni | default dict -}}
{{- $validator := $cfg.validator | default dict -}}
{{- $system := list "kube-system" "kube-public" "kube-node-lease" -}}
{{- if hasKey $cfg "systemNamespaces" -}}
{{- $system = $cfg.systemNamespaces | default list -}}
{{- end -}}
{{- $excluded := prepend $system .Release.Namespace | uniq -}}
{{- dict "pluginType" ($cni.pluginType | default $p.pluginType) "validatorName" ($validator.name | default $p.validatorName) "failureExitCodes" $p.failureExitCodes "excludedNamespaces" $excluded | toJson -}}
{{- end -}}

{{/*
The config file every meshgate process reads (`--config`): `mesh`, then .Values.config with meshNamespace (the
release namespace), enforcement.default (always written: meshgate.enforcementDefault) and, unless set,
validator.image (the chart's image: the validator runs meshgate).
*/}}
{{- define "meshgate.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- $_ := set $cfg "meshNamespace" .Release.Namespace -}}
{{- $enforcement := deepCopy ($cfg.enforcement | default dict) -}}
{{- $_ := set $enforcement "default" (include "meshgate.enforcementDefault" .) -}}
{{- $_ := set $cfg "enforcement" $enforcement -}}
{{- $validator := deepCopy ($cfg.validator | default dict) -}}
{{- if not $validator.image -}}
{{- $_ := set $validator "image" (include "meshgate.image" .) -}}
{{- end -}}
{{- $_ := set $cfg "validator" $validator -}}
mesh: {{ .Values.mesh }}
{{ toYaml $cfg }}
{{- end -}}

{{/*
config.enforcement.default: the level of a guarded namespace without the label meshgate.io/enforcement
(docs/security.md, "Enforcement levels"). Unset, a new install (and `helm template`, which cannot look) starts at
audit, so meshgate installed next to a running mesh refuses nothing on day one; a release being upgraded keeps the
level its ConfigMap holds, and one from before levels existed (0.1.x, no enforcement key) keeps enforce — an upgrade
never lowers enforcement unless the value says so.
*/}}
{{- define "meshgate.enforcementDefault" -}}
{{- $set := ((.Values.config | default dict).enforcement | default dict).default -}}
{{- if $set -}}
{{- $set -}}
{{- else -}}
{{- $cm := lookup "v1" "ConfigMap" .Release.Namespace (include "meshgate.fullname" .) -}}
{{- if $cm -}}
{{- $live := get ($cm.data | default dict) "config.yaml" | default "" | fromYaml -}}
{{- (($live.enforcement | default dict).default) | default "enforce" -}}
{{- else -}}
audit
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The namespaces whose mesh ConfigMaps the webhook reads to learn what the mesh injects (config.learnImages, as JSON):
the value, else the profile's default (src/config/defaults.ts: istio-system for istio, linkerd for linkerd).
*/}}
{{- define "meshgate.learnImagesNamespaces" -}}
{{- $set := ((.Values.config | default dict).learnImages | default dict).namespaces -}}
{{- if kindIs "slice" $set -}}
{{- toJson $set -}}
{{- else if eq .Values.mesh "istio" -}}
["istio-system"]
{{- else if eq .Values.mesh "linkerd" -}}
["linkerd"]
{{- else -}}
[]
{{- end -}}
{{- end -}}

{{/*
The flags of meshgate's NRI plugin (nri/, nriPlugin.enabled) as a JSON list: the identity the mesh's redirect exempts
and the mesh's container names — the configured ones and the injector's — as src/agent/guard/start.ts
nriPluginArgs computes them from the config file (test/chart/nri-plugin.test.ts holds the two together).
*/}}
{{- define "meshgate.nriArgs" -}}
{{- $defaults := dict
  "istio" (dict "uid" 1337 "gid" 1337 "names" (list "istio-proxy" "istio-init" "istio-validation") "gidAnnotations" list)
  "linkerd" (dict "uid" 2102 "names" (list "linkerd-proxy" "linkerd-init" "linkerd-network-validator") "gidAnnotations" (list "config.linkerd.io/proxy-gid"))
  "custom" (dict "uid" 1337 "gid" 1337 "names" (list "meshgate-proxy" "meshgate-init" "meshgate-validate") "gidAnnotations" list) -}}
{{- $d := get $defaults .Values.mesh -}}
{{- $cfg := .Values.config | default dict -}}
{{- $proxy := $cfg.proxy | default dict -}}
{{- $init := $cfg.init | default dict -}}
{{- $validator := $cfg.validator | default dict -}}
{{- $args := list (printf "--proxy-uid=%v" ($proxy.uid | default $d.uid)) -}}
{{- $gid := ternary $proxy.gid $d.gid (hasKey $proxy "gid") -}}
{{- if $gid }}{{ $args = append $args (printf "--proxy-gid=%v" $gid) }}{{ end -}}
{{- $names := list ($proxy.name | default (index $d.names 0)) ($init.name | default (index $d.names 1)) ($validator.name | default (index $d.names 2)) -}}
{{- range (concat $names $d.names | uniq) }}{{ $args = append $args (printf "--mesh-container=%s" .) }}{{ end -}}
{{- range $d.gidAnnotations }}{{ $args = append $args (printf "--exempt-gid-annotation=%s" .) }}{{ end -}}
{{- toJson $args -}}
{{- end -}}
