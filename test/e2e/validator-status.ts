/**
 * The status a kubelet writes for a pod whose validation init container (istio-validation, meshgate's image) failed
 * with exit 42 — the redirect is not in place, `detail` says how the probe saw it — and now waits in CrashLoopBackOff:
 * what the repair controller acts on. Written with a strategic merge patch of pods/status (`terminated: null` clears
 * the state kwok wrote when it ran the pod); `finishedAt`, when given, dates the failure.
 */
export function validatorCrashLoop(detail: string, finishedAt?: Date) {
  const message = JSON.stringify({ reason: 'not_redirected', detail });
  return {
    initContainerStatuses: [
      {
        name: 'istio-validation',
        image: 'ghcr.io/meshgate/meshgate:0.1.0',
        imageID: '',
        ready: false,
        restartCount: 1,
        state: { terminated: null, waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { exitCode: 42, reason: 'Error', message, ...(finishedAt && { finishedAt }) } },
      },
    ],
  };
}
