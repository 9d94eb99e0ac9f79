{{/*
meshgate's alerts (docs/metrics.md, "Alerts"), as Prometheus rule groups. They select meshgate's series by the job
labels the chart's monitors give them (servicemonitor.yaml, podmonitor.yaml) and by the release namespace; the
apiserver's own webhook metrics by the webhook names (<entry>.mutate.meshgate.io, <entry>.validate.meshgate.io).
Every alert links its runbook, docs/runbooks/<alert>.md under metrics.prometheusRule.runbookBaseURL ("meshgate.runbook").
A replica down is told from kube-state-metrics (desired vs available replicas of the Deployment) where Prometheus has
it, else from the replica's failed scrapes.
test/monitoring/alerts.test.ts renders this, checks it with promtool and runs test/monitoring/alerts.test.yaml.
*/}}
{{- define "meshgate.runbook" -}}
runbook_url: {{ printf "%s/%s.md" (trimSuffix "/" .root.Values.metrics.prometheusRule.runbookBaseURL) .alert }}
{{- end -}}
{{- define "meshgate.alertGroups" -}}
{{- $r := .Values.metrics.prometheusRule -}}
{{- $ns := .Release.Namespace -}}
{{- $wh := printf "job=\"%s\",namespace=\"%s\"" (include "meshgate.fullname" .) $ns -}}
{{- $agent := printf "job=\"%s\",namespace=\"%s\"" (include "meshgate.nodeAgentName" .) $ns -}}
{{- $repair := printf "job=\"%s\",namespace=\"%s\"" (include "meshgate.repairName" .) $ns -}}
{{- $webhooks := "name=~\".+\\\\.(mutate|validate)\\\\.meshgate\\\\.io\"" -}}
{{- $whDeploy := printf "namespace=\"%s\",deployment=\"%s\"" $ns (include "meshgate.fullname" .) -}}
{{- $repairDeploy := printf "namespace=\"%s\",deployment=\"%s\"" $ns (include "meshgate.repairName" .) -}}
{{- $extra := $r.alertLabels | default dict -}}
groups:
  - name: meshgate-webhook
    rules:
      - alert: MeshgateWebhookDown
        expr: absent(up{ {{- $wh -}} } == 1)
        for: 5m
        labels:
          {{- toYaml (merge (dict "severity" "critical") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateWebhookDown") | nindent 10 }}
          summary: No meshgate webhook replica is up in namespace {{ $ns }}.
          description: >-
            Prometheus has scraped no ready meshgate webhook for 5 minutes. The validating webhook's failurePolicy is
            Fail: pods in opted-in namespaces can be neither created nor bound until a replica answers.
            `kubectl -n {{ $ns }} get pods -l app.kubernetes.io/component=webhook`.
      - alert: MeshgateWebhookReplicaDown
        expr: |-
          (sum(up{ {{- $wh -}} } == bool 0) > 0)
          or
          (max(kube_deployment_spec_replicas{ {{- $whDeploy -}} } - kube_deployment_status_replicas_available{ {{- $whDeploy -}} }) > 0)
        for: 10m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateWebhookReplicaDown") | nindent 10 }}
          summary: {{ printf "%s meshgate webhook replica(s) down in namespace %s." `{{ $value }}` $ns | quote }}
          description: >-
            For 10 minutes a webhook replica has failed its scrapes, or (with kube-state-metrics) the Deployment has had
            fewer available replicas than it wants. The others still answer, with less headroom: one more down and
            pods in opted-in namespaces can be neither created nor bound (MeshgateWebhookDown).
      - alert: MeshgateWebhookCallsFailing
        expr: |-
          (sum by (name) (rate(apiserver_admission_webhook_rejection_count{ {{- $webhooks -}} ,error_type="calling_webhook_error"}[5m])) > 0)
          or
          (sum by (name) (rate(apiserver_admission_webhook_fail_open_count{ {{- $webhooks -}} }[5m])) > 0)
        for: 5m
        labels:
          {{- toYaml (merge (dict "severity" "critical") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateWebhookCallsFailing") | nindent 10 }}
          summary: {{ `The apiserver cannot call meshgate's webhook {{ $labels.name }}.` | quote }}
          description: >-
            {{`The apiserver's calls to {{ $labels.name }} fail (unreachable, timeout, or a certificate it does not
            trust): requests are refused (failurePolicy Fail) or pass unmutated (Ignore). Needs the apiserver's own
            metrics in Prometheus.`}}
      - alert: MeshgateAdmissionErrors
        expr: sum by (route) (rate(meshgate_admission_decisions_total{ {{- $wh -}} ,decision="error"}[5m])) > 0
        for: 10m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateAdmissionErrors") | nindent 10 }}
          summary: {{ `meshgate answers errored reviews on /{{ $labels.route }}.` | quote }}
          description: >-
            {{`meshgate could not decide some reviews on /{{ $labels.route }} (reason internal_error in its logs); the
            apiserver applied the webhook's failurePolicy to them.`}}
      - alert: MeshgateRefusalSpike
        expr: sum by (reason) (rate(meshgate_admission_decisions_total{ {{- $wh -}} ,decision="deny"}[5m])) * 60 > {{ $r.refusalsPerMinute }}
        for: 10m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateRefusalSpike") | nindent 10 }}
          summary: {{ printf "meshgate refuses %s pods per minute (%s)." `{{ $value | printf "%.1f" }}` `{{ $labels.reason }}` | quote }}
          description: >-
            {{ printf "For 10 minutes meshgate has refused more than %v pod requests per minute for reason %s:" $r.refusalsPerMinute `{{ $labels.reason }}` }}
            those pods do not run, and their controllers keep retrying. The metric's exported_namespace label names the
            namespaces, the webhook's admission log lines the pods and their owners.
      - alert: MeshgateAdmittedBelowEnforce
        expr: sum by (reason) (increase(meshgate_audited_pods_total{ {{- $wh -}} }[1h])) >= 1
        labels:
          {{- toYaml (merge (dict "severity" "info") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateAdmittedBelowEnforce") | nindent 10 }}
          summary: {{ printf "meshgate admitted %s pods in the last hour that enforce would refuse (%s)." `{{ $value | printf "%.0f" }}` `{{ $labels.reason }}` | quote }}
          description: >-
            {{ `In the last hour meshgate admitted pods for reason {{ $labels.reason }} because their namespace is at
            audit or warn, not enforce: they run as the mesh alone would run them, possibly without redirection.
            meshgate check --audit lists them with the fix; promote the namespace once it lists nothing.` }}
      - alert: MeshgateWebhookOverloaded
        expr: sum by (limit) (rate(meshgate_overload_refusals_total{ {{- $wh -}} }[5m])) > 0
        for: 10m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateWebhookOverloaded") | nindent 10 }}
          summary: {{ `meshgate refuses requests at its {{ $labels.limit }} limit.` | quote }}
          description: >-
            {{`Requests are refused with 429 (client-go retries them within the webhook timeout) because {{ $labels.limit }}
            is reached: add replicas or raise the limit (webhook.extraArgs) with the memory limit.`}}
  - name: meshgate-certificates
    rules:
      {{- range $severity, $days := dict "warning" $r.certificateExpiryWarningDays "critical" $r.certificateExpiryCriticalDays }}
      - alert: MeshgateCertificateExpiring
        expr: min by (certificate) (meshgate_certificate_expiration_timestamp_seconds{ {{- $wh -}} }) - time() < {{ $days }} * 86400
        for: 1h
        labels:
          {{- toYaml (merge (dict "severity" $severity) $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateCertificateExpiring") | nindent 10 }}
          summary: {{ printf "meshgate's %s certificate expires in less than %d days." `{{ $labels.certificate }}` (int $days) | quote }}
          description: >-
            {{`The {{ $labels.certificate }} certificate expires in {{ $value | humanizeDuration }}. It should have been
            renewed long before (self-managed: at two thirds of its life; cert-manager: renewBefore): check the webhook's
            logs for "certificate" errors, or the Certificate resource.`}}
      {{- end }}
      - alert: MeshgateCARotationStuck
        expr: max(meshgate_ca_bundle_certificates{ {{- $wh -}} }) > 1
        for: 2h
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateCARotationStuck") | nindent 10 }}
          summary: A meshgate CA rotation has overlapped two CAs for over 2 hours.
          description: >-
            The caBundle still holds the old and the new CA: the rotation waits for every replica to report that it
            serves the new certificate. A replica that cannot update the TLS Secret holds it back (webhook logs).
  - name: meshgate-nodes
    rules:
      - alert: MeshgateNodesUnverified
        expr: max by (reason) (meshgate_nodes{ {{- $wh -}} ,verified="false",reason!="stale_verdict"}) > 0
        for: {{ $r.nodesUnverifiedFor }}
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateNodesUnverified") | nindent 10 }}
          summary: {{ `{{ $value }} node(s) have no verified CNI chain ({{ $labels.reason }}).` | quote }}
          description: >-
            {{`meshgate refuses CNI-mode pods on these nodes (or falls back, per config.redirect). Which nodes:
            kubectl get nodes -l meshgate.io/cni-verified!=true; why: meshgate check, or the MeshCNIVerified condition.`}}
      - alert: MeshgateNodeVerdictsStale
        expr: max(meshgate_nodes{ {{- $wh -}} ,reason="stale_verdict"}) > 0
        for: 5m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateNodeVerdictsStale") | nindent 10 }}
          summary: {{ `The CNI verdicts of {{ $value }} node(s) are stale.` | quote }}
          description: >-
            The node agent on these nodes has not re-confirmed its verdict within config.cni.maxVerdictAgeSeconds, so
            meshgate treats them as unverified (reason stale_verdict). Is the node agent running there?
      {{- if .Values.nodeAgent.enabled }}
      - alert: MeshgateNodeAgentDown
        expr: up{ {{- $agent -}} } == 0
        for: 10m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateNodeAgentDown") | nindent 10 }}
          summary: {{ `meshgate's node agent on {{ $labels.node }} cannot be scraped.` | quote }}
          description: >-
            {{`The node agent on {{ $labels.node }} ({{ $labels.instance }}) has not answered /metrics for 10 minutes; once
            its verdict is older than config.cni.maxVerdictAgeSeconds the node counts as unverified.`}}
      - alert: MeshgateNodeAgentPublishFailing
        expr: sum by (node) (rate(meshgate_node_agent_publish_errors_total{ {{- $agent -}} }[10m])) > 0
        for: 15m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateNodeAgentPublishFailing") | nindent 10 }}
          summary: {{ `meshgate's node agent on {{ $labels.node }} cannot write its verdict to the Node.` | quote }}
          description: >-
            {{`Calls to the Kubernetes API fail (see meshgate_node_agent_publish_errors_total by operation and the
            agent's log): the Node keeps an old verdict, which goes stale after config.cni.maxVerdictAgeSeconds.`}}
      {{- if .Values.nodeAgent.proxyGuard.enabled }}
      - alert: MeshgateProxyIdentityStopped
        expr: sum by (node) (increase(meshgate_node_agent_proxy_identity_total{ {{- $agent -}} ,action=~"killed|refused_by_runtime"}[10m])) > 0
        labels:
          {{- toYaml (merge (dict "severity" "critical") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateProxyIdentityStopped") | nindent 10 }}
          summary: {{ `A container on {{ $labels.node }} ran, or tried to run, as the mesh proxy's identity.` | quote }}
          description: >-
            {{`A container of a meshgate-admitted pod on {{ $labels.node }}, other than the mesh's, was or became the
            proxy's UID/GID (image USER, setuid, a file capability, a set-user-ID binary), whose traffic the redirect
            exempts: the node agent killed it and removed its pod, or meshgate's NRI plugin refused it. The Events
            name the pod (kubectl get events -A --field-selector reason=MeshProxyIdentityStopped).`}}
      {{- end }}
      {{- end }}
  {{- if .Values.repairController.enabled }}
  - name: meshgate-repair
    rules:
      - alert: MeshgateValidatorFailuresRising
        expr: |-
          (sum(increase(meshgate_repair_pods_deleted_total{ {{- $repair -}} }[{{ $r.validatorFailuresWindow }}])) or vector(0))
          + (sum(increase(meshgate_repair_pods_reported_total{ {{- $repair -}} }[{{ $r.validatorFailuresWindow }}])) or vector(0))
          > {{ $r.validatorFailuresThreshold }}
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateValidatorFailuresRising") | nindent 10 }}
          summary: {{ printf "Pods started without traffic redirection: %s in %s." `{{ $value | printf "%.0f" }}` $r.validatorFailuresWindow | quote }}
          description: >-
            Validation init containers found no redirect (meshgate's validator, istio-validation or Linkerd's network
            validator): a node's CNI chain misses the mesh plugin although it was verified, or lost it. The repair
            controller's Events name the pods and nodes (kubectl get events -A --field-selector reason=MeshRedirectFailed).
      - alert: MeshgateRepairReplicaDown
        expr: |-
          (sum(up{ {{- $repair -}} } == bool 0) > 0)
          or
          (max(kube_deployment_spec_replicas{ {{- $repairDeploy -}} } - kube_deployment_status_replicas_available{ {{- $repairDeploy -}} }) > 0)
        for: 10m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateRepairReplicaDown") | nindent 10 }}
          summary: {{ printf "%s meshgate repair controller replica(s) down in namespace %s." `{{ $value }}` $ns | quote }}
          description: >-
            For 10 minutes a repair controller replica has failed its scrapes, or (with kube-state-metrics) the
            Deployment has had fewer available replicas than it wants. The leader still acts; if it is the one down,
            another takes the Lease, and with none left MeshgateRepairNoLeader fires.
      - alert: MeshgateRepairNoLeader
        expr: sum(meshgate_repair_leader{ {{- $repair -}} }) < 1
        for: 10m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateRepairNoLeader") | nindent 10 }}
          summary: No meshgate repair controller replica holds the leader Lease.
          description: >-
            Pods whose validator failed are neither deleted nor reported until a replica leads; check the replicas'
            logs and the Lease {{ include "meshgate.repairName" . }} in {{ $ns }}.
      {{- /*
      Guarded ambient pods that lost ztunnel's capture (src/repair/capture/). Every replica judges the same pods from its
      own watch, so the gauge is max'ed, not summed (a sum counts each pod once per replica). 5 minutes: at enforce the
      leader deletes such a pod within seconds (2 s grace), a burst of up to 50 within 5 minutes at the default
      --max-deletes-per-minute (10), and a new leader resyncs at once; a pod still counted after that is not being
      removed.
      */}}
      - alert: MeshgateAmbientCaptureLost
        expr: max(meshgate_repair_capture_lost_pods{ {{- $repair -}} }) > 0
        for: 5m
        labels:
          {{- toYaml (merge (dict "severity" "critical") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateAmbientCaptureLost") | nindent 10 }}
          summary: {{ `{{ $value }} guarded ambient pod(s) run without ztunnel's capture.` | quote }}
          description: >-
            For 5 minutes Istio ambient pods that meshgate admitted have been running outside the mesh: istio-cni took
            them out (their namespace's or their own istio.io/dataplane-mode changed) and their traffic leaves
            unredirected. At enforce the repair controller deletes them within seconds, so these are not being removed:
            their namespace is below enforce or no longer guarded (reported only), or deletion fails, is postponed
            (--max-deletes-per-minute) or waits for a leader. The Events name them
            (kubectl get events -A --field-selector reason=MeshCaptureLost), but for a failing deletion only the repair
            controller's log does.
      {{- /*
      The same loss found again and again, each time deleted: the gauge above drops within seconds each time and stays
      quiet. Deletions in every 10 minutes for 30 minutes, so a one-off burst (a namespace taken out of ambient once,
      its pods deleted) does not fire.
      */}}
      - alert: MeshgateAmbientCaptureLostRepeatedly
        expr: sum(increase(meshgate_repair_capture_lost_total{ {{- $repair -}} ,action="deleted"}[10m])) > 0
        for: 30m
        labels:
          {{- toYaml (merge (dict "severity" "warning") $extra) | nindent 10 }}
        annotations:
          {{- include "meshgate.runbook" (dict "root" $ "alert" "MeshgateAmbientCaptureLostRepeatedly") | nindent 10 }}
          summary: Guarded ambient pods keep losing ztunnel's capture and being deleted.
          description: >-
            For 30 minutes the repair controller has deleted, in every 10 minutes, Istio ambient pods that ran without
            ztunnel's capture: something keeps taking recreated pods out of the mesh (a label flipped back and forth,
            a controller undoing istio.io/dataplane-mode), each pod runs unredirected for seconds, and its workload
            restarts. The Events name them (kubectl get events -A --field-selector reason=MeshCaptureLost).
  {{- end }}
{{- end -}}
