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
