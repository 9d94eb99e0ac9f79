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

static const int ports[] = {4140, 4143, 4190, 4191};
#define NPORTS (sizeof ports / sizeof ports[0])
#define ADMIN_PORT 4191

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
    fprintf(stderr, "meshgate-e2e-linkerd-proxy: cannot listen on 0.0.0.0:%d: %s\n", port, strerror(errno));
    exit(1);
  }
  return fd;
}

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
  if (port == ADMIN_PORT) {
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
  if (argc > 1) {
    fprintf(stderr, "meshgate-e2e-linkerd-proxy: stand-in linkerd2-proxy takes no arguments (got \"%s\")\n", argv[1]);
    return 2;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  signal(SIGPIPE, SIG_IGN);
  for (size_t i = 0; i < NPORTS; i++) fds[i] = (struct pollfd){.fd = listen_on(ports[i]), .events = POLLIN};
  fprintf(stderr, "meshgate-e2e-linkerd-proxy: listening on 4140, 4143, 4190, 4191\n");
  for (;;) {
    if (poll(fds, NPORTS, -1) < 0) {
      if (errno == EINTR) continue;
      perror("meshgate-e2e-linkerd-proxy: poll");
      return 1;
    }
    for (size_t i = 0; i < NPORTS; i++) {
      if (!(fds[i].revents & POLLIN)) continue;
      int c = accept(fds[i].fd, NULL, NULL);
      if (c >= 0) answer(c, ports[i]);
    }
  }
}
