/*
 * Stand-in for Linkerd's proxy (linkerd2-proxy, a Rust program not built here) in the real-node test tier. NOT a
 * proxy: like proxy.c for Istio, it only listens where the injected linkerd-proxy listens, so that redirection
 * inside a pod can be observed end to end:
 *   4140  outbound capture (LINKERD2_PROXY_OUTBOUND_LISTEN_ADDR)   4143  inbound capture
 *   4190  control                                                   4191  admin: HTTP 200 (/live, /ready probes)
 * A capture port answers every connection with one line and closes it:
 *   meshgate-e2e-proxy port=<listening port> orig=<original destination ip:port>\n
 * (SO_ORIGINAL_DST: what the client dialled before the nat REDIRECT). The injector gives the proxy no command or
 * arguments: this is the image's entrypoint, and any argument is refused (a shape not modelled fails visibly).
 * SIGTERM/SIGINT exit at once with status 0. Built static by the tier (harness/linkerd-image.ts).
 */
#include "standin.h"

static const int ports[] = {4140, 4143, 4190, 4191};
#define ADMIN_PORT 4191

/* The admin port answers the /live and /ready probes: HTTP 200. */
static int http_port(int port) { return port == ADMIN_PORT; }

int main(int argc, char **argv) {
  if (argc > 1) {
    fprintf(stderr, "meshgate-e2e-linkerd-proxy: stand-in linkerd2-proxy takes no arguments (got \"%s\")\n", argv[1]);
    return 2;
  }
  return standin_serve("meshgate-e2e-linkerd-proxy", ports, sizeof ports / sizeof ports[0], http_port,
                       "listening on 4140, 4143, 4190, 4191");
}
