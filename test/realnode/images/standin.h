/*
 * What the real-node tier's proxy stand-ins (proxy.c for Istio's proxyv2, linkerd-proxy.c for linkerd2-proxy) do
 * alike, once: listen where the mesh's proxy listens and answer each connection with one line, then close it.
 *   a capture port:  meshgate-e2e-proxy port=<listening port> orig=<original destination ip:port>\n
 *                    (SO_ORIGINAL_DST: what the client dialled before the nat REDIRECT)
 *   an HTTP port:    HTTP/1.1 200 OK, after reading (part of) the request so the client sees no reset
 * SIGTERM/SIGINT exit at once with status 0, so pod deletion does not wait for the grace period. Single-threaded,
 * one poll() loop, no allocation. Header-only: each stand-in is still built static from its one .c file.
 */
#ifndef MESHGATE_STANDIN_H
#define MESHGATE_STANDIN_H

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

#define STANDIN_MAX_PORTS 8

static void standin_on_signal(int sig) {
  (void)sig;
  _exit(0);
}

static int standin_listen(const char *name, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
      bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0) {
    fprintf(stderr, "%s: cannot listen on 0.0.0.0:%d: %s\n", name, port, strerror(errno));
    exit(1);
  }
  return fd;
}

/* Writes the whole buffer or gives up (the peer went away: nothing to do about it). */
static void standin_write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n <= 0) return;
    buf += n;
    len -= (size_t)n;
  }
}

static void standin_answer(int fd, int port, int http) {
  char line[160];
  int n;
  if (http) {
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
  standin_write_all(fd, line, (size_t)n);
  close(fd);
}

/*
 * Listens on the `nports` ports (at most STANDIN_MAX_PORTS), those for which `http(port)` holds answering as HTTP,
 * the others as capture ports, and says `banner` on stderr once all listen; then serves until a signal ends the
 * process. `name` prefixes its messages. Returns 1 only if poll() fails.
 */
static int standin_serve(const char *name, const int *ports, size_t nports, int (*http)(int port),
                         const char *banner) {
  struct pollfd fds[STANDIN_MAX_PORTS];
  if (nports > STANDIN_MAX_PORTS) nports = STANDIN_MAX_PORTS;
  signal(SIGTERM, standin_on_signal);
  signal(SIGINT, standin_on_signal);
  signal(SIGPIPE, SIG_IGN);
  for (size_t i = 0; i < nports; i++) fds[i] = (struct pollfd){.fd = standin_listen(name, ports[i]), .events = POLLIN};
  fprintf(stderr, "%s: %s\n", name, banner);
  for (;;) {
    if (poll(fds, nports, -1) < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, "%s: poll: %s\n", name, strerror(errno));
      return 1;
    }
    for (size_t i = 0; i < nports; i++) {
      if (!(fds[i].revents & POLLIN)) continue;
      int c = accept(fds[i].fd, NULL, NULL);
      if (c >= 0) standin_answer(c, ports[i], http(ports[i]));
    }
  }
}

#endif
