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
 * SIGTERM/SIGINT exit at once with status 0, so pod deletion does not wait for the grace period.
 * Built static (gcc -static) by scripts/build-realnode.sh; single-threaded, one poll() loop, no allocation.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* 15090: Envoy's Prometheus port, which the injected container declares; answered like the readiness port. */
static const int ports[] = {15001, 15006, 15021, 15090};
#define NPORTS (sizeof ports / sizeof ports[0])
#define READINESS_PORT 15021
#define PROMETHEUS_PORT 15090
#define ISTIO_IPTABLES "/usr/local/bin/istio-iptables"

static void on_signal(int sig) {
  (void)sig;
  _exit(0);
}

static int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
      bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0) {
    fprintf(stderr, "meshgate-e2e-proxy: cannot listen on 0.0.0.0:%d: %s\n", port, strerror(errno));
    exit(1);
  }
  return fd;
}

/* Writes the whole buffer or gives up (the peer went away: nothing to do about it). */
static void write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n <= 0) return;
    buf += n;
    len -= (size_t)n;
  }
}

static void answer(int fd, int port) {
  char line[160];
  int n;
  if (port == READINESS_PORT || port == PROMETHEUS_PORT) {
    /* Read (part of) the request so the client does not see a reset, then answer like Envoy's readiness. */
    char req[512];
    struct timeval tv = {.tv_sec = 1};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)read(fd, req, sizeof req);
    n = snprintf(line, sizeof line, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  } else {
    struct sockaddr_in orig;
    socklen_t len = sizeof orig;
    char ip[INET_ADDRSTRLEN] = "unknown";
    int oport = 0;
    if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &orig, &len) == 0) {
      inet_ntop(AF_INET, &orig.sin_addr, ip, sizeof ip);
      oport = ntohs(orig.sin_port);
    }
    n = snprintf(line, sizeof line, "meshgate-e2e-proxy port=%d orig=%s:%d\n", port, ip, oport);
  }
  write_all(fd, line, (size_t)n);
  close(fd);
}

int main(int argc, char **argv) {
  struct pollfd fds[NPORTS];
  if (argc > 1 && strcmp(argv[1], "istio-iptables") == 0) {
    execv(ISTIO_IPTABLES, argv + 1);
    fprintf(stderr, "meshgate-e2e-proxy: cannot run %s: %s\n", ISTIO_IPTABLES, strerror(errno));
    return 127;
  }
  if (argc > 1 && strcmp(argv[1], "proxy") != 0) {
    fprintf(stderr, "meshgate-e2e-proxy: stand-in pilot-agent: command \"%s\" is not modelled (only proxy, istio-iptables)\n", argv[1]);
    return 2;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  signal(SIGPIPE, SIG_IGN);
  for (size_t i = 0; i < NPORTS; i++) fds[i] = (struct pollfd){.fd = listen_on(ports[i]), .events = POLLIN};
  fprintf(stderr, "meshgate-e2e-proxy: listening on 15001, 15006, 15021, 15090 (%d args ignored)\n", argc - 1);
  for (;;) {
    if (poll(fds, NPORTS, -1) < 0) {
      if (errno == EINTR) continue;
      perror("meshgate-e2e-proxy: poll");
      return 1;
    }
    for (size_t i = 0; i < NPORTS; i++) {
      if (!(fds[i].revents & POLLIN)) continue;
      int c = accept(fds[i].fd, NULL, NULL);
      if (c >= 0) answer(c, ports[i]);
    }
  }
}
