/*
 * Stand-in for a mesh proxy (Istio's proxyv2 / Envoy) in the real-node test tier. NOT a proxy: it only listens on
 * the ports a sidecar listens on, so that iptables redirection inside a pod can be observed end to end:
 *   15001  outbound capture (Istio)      15006  inbound capture (Istio)
 *   15021  readiness: HTTP 200 for any request, like Envoy's /healthz/ready
 * A capture port answers every connection with one line and closes it:
 *   meshgate-e2e-proxy port=<listening port> orig=<original destination ip:port>\n
 * The original destination comes from SO_ORIGINAL_DST, i.e. what the client dialled before the nat REDIRECT, so a
 * test that connects to 203.0.113.1:80 from inside the pod can tell that its own connection reached this process.
 *
 * It is the entrypoint of the stand-in proxyv2 image (/usr/local/bin/pilot-agent, like Istio's), and dispatches on
 * its first argument as pilot-agent does for the two commands Istio's injector gives it:
 *   proxy sidecar …         (istio-proxy)  the listeners above; the other arguments are ignored
 *   istio-iptables …        (istio-init)   exec()s the REAL istio-iptables (/usr/local/bin/istio-iptables, built
 *                                          from Istio 1.27.0 by scripts/build-istio.sh) with the same arguments,
 *                                          so the pod gets exactly the rules Istio's init container installs
 * Anything else exits 2 with a message (a pod spec this stand-in does not model must fail visibly).
 * Built static (gcc -static) by scripts/build-realnode.sh, with standin.h.
 */
#include "standin.h"

/* 15090: Envoy's Prometheus port, which the injected container declares; answered like the readiness port. */
static const int ports[] = {15001, 15006, 15021, 15090};
#define READINESS_PORT 15021
#define PROMETHEUS_PORT 15090
#define ISTIO_IPTABLES "/usr/local/bin/istio-iptables"

/* Answered like Envoy's readiness: HTTP 200 for any request. */
static int http_port(int port) { return port == READINESS_PORT || port == PROMETHEUS_PORT; }

int main(int argc, char **argv) {
  char banner[80];
  if (argc > 1 && strcmp(argv[1], "istio-iptables") == 0) {
    execv(ISTIO_IPTABLES, argv + 1);
    fprintf(stderr, "meshgate-e2e-proxy: cannot run %s: %s\n", ISTIO_IPTABLES, strerror(errno));
    return 127;
  }
  if (argc > 1 && strcmp(argv[1], "proxy") != 0) {
    fprintf(stderr, "meshgate-e2e-proxy: stand-in pilot-agent: command \"%s\" is not modelled (only proxy, istio-iptables)\n", argv[1]);
    return 2;
  }
  snprintf(banner, sizeof banner, "listening on 15001, 15006, 15021, 15090 (%d args ignored)", argc - 1);
  return standin_serve("meshgate-e2e-proxy", ports, sizeof ports / sizeof ports[0], http_port, banner);
}
