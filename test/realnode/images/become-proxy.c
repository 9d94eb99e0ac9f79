/*
 * The app of real-node scenario S9 ("who can become the proxy", docs/security.md): a container that tries to send
 * past its pod's proxy the way issue 21 §3 describes, and says what happened. As a pod's app container it:
 *   1. prints `{"event":"start",...}` with who it is, then waits BECOME_PROXY_DELAY_S seconds (default 0: at once;
 *      issue 31 §2's "setuid(1337) ten seconds after start" sets 10);
 *   2. reads who it is: uid, gid, its capability sets and no_new_privs (/proc/self/status);
 *   3. raises into its effective set whatever its permitted set holds, as a capability-aware program does (a file
 *      capability without the effective bit, `setcap cap_setuid,cap_setgid+p`, lands only in the permitted set);
 *   4. tries setgid(ID), then setuid(ID), ID = BECOME_PROXY_ID (default 1337: Istio's proxy identity, which the pod's
 *      redirect rules exempt; Linkerd's is 2102);
 *   5. connects to 203.0.113.1:80 (TEST-NET-3, fixed here and unreachable in the test's network namespace: never
 *      anything else) and reads the first line; a connection redirected to the proxy stand-in is answered with
 *      `meshgate-e2e-proxy port=15001 orig=203.0.113.1:80`. ECONNREFUSED means the redirect is there but the proxy
 *      is not listening yet: retried every 250 ms for up to 30 s. Any other outcome ends the attempt;
 *   6. prints one JSON line (the report) on stdout;
 *   7. with BECOME_PROXY_STREAM_S > 0, connects again every 100 ms for that many seconds, one JSON line per attempt
 *      (`{"attempt":n,...}`: its IDs then and where the connection went; each waits at most 250 ms: one the proxy has
 *      not answered by then has sent its SYN past it), so a harness following the log counts the
 *      connections that got past the proxy until something stops the app; then `{"event":"done"}`;
 *   8. idles until SIGTERM (exit 0), so the harness reads the lines with the pod's log and judges the pod's network
 *      namespace while it runs.
 * Every line is flushed as written. Built static (gcc -static) by scripts/build-realnode.sh; the scenario's image
 * gives it the file capability.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Istio's proxy identity; BECOME_PROXY_ID overrides it. */
#define DEFAULT_PROXY_ID 1337
#define PROBE_HOST "203.0.113.1"
#define PROBE_PORT 80
/* A redirected connection is answered in milliseconds; an unredirected one fails at once or is never answered. */
#define STEP_TIMEOUT_MS 3000
/* istio-proxy may start after the app (a regular container next to it): give it this long to listen. */
#define PROXY_WAIT_MS 30000
#define RETRY_MS 250
/* The streamed attempts' period (BECOME_PROXY_STREAM_S), and how long each waits: a redirected connection is
   answered by the proxy stand-in in milliseconds; an unredirected one has already left the pod with its SYN (the
   node answers the first with ICMP unreachable, later ones not: ICMP is rate-limited), so waiting longer would only
   make the app count fewer of them. */
#define STREAM_PERIOD_MS 100
#define STREAM_TIMEOUT_MS 250

static void on_signal(int sig) {
  (void)sig;
  _exit(0);
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* The value of "<key>:" in /proc/self/status, e.g. CapPrm → "00000000a80425fb"; "?" when unreadable. */
static void status_field(const char *key, char *out, size_t size) {
  char line[256];
  size_t klen = strlen(key);
  FILE *f = fopen("/proc/self/status", "r");
  snprintf(out, size, "?");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) != 0 || line[klen] != ':') continue;
    char *v = line + klen + 1;
    v += strspn(v, " \t");
    v[strcspn(v, "\n")] = 0;
    snprintf(out, size, "%s", v);
    break;
  }
  fclose(f);
}

/* "ok" or the errno's name (EPERM, …). */
static const char *outcome(int rc, int err) {
  if (rc == 0) return "ok";
  const char *name = strerrorname_np(err);
  return name ? name : "unknown";
}

/* Effective := permitted, by raw capget/capset (no libcap in a static binary). */
static int raise_permitted(void) {
  struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
  if (syscall(SYS_capget, &h, d) != 0) return -1;
  for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) d[i].effective = d[i].permitted;
  return (int)syscall(SYS_capset, &h, d);
}

/* One connection attempt, each step waiting up to `timeout_ms`: 0 and the first line read into `line`, or -1 with
   errno set. */
static int dial_once(char *line, size_t size, int timeout_ms) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PROBE_PORT)};
  inet_pton(AF_INET, PROBE_HOST, &a.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  struct pollfd p = {.fd = fd, .events = POLLOUT};
  int err = 0;
  socklen_t len = sizeof err;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    if (errno != EINPROGRESS) goto fail;
    int n = poll(&p, 1, timeout_ms);
    if (n == 0) errno = ETIMEDOUT;
    if (n <= 0) goto fail;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) goto fail;
    if (err != 0) {
      errno = err;
      goto fail;
    }
  }
  size_t got = 0;
  p.events = POLLIN;
  while (got + 1 < size) {
    int n = poll(&p, 1, timeout_ms);
    if (n == 0) errno = ETIMEDOUT;
    if (n <= 0) goto fail;
    ssize_t r = read(fd, line + got, size - 1 - got);
    if (r < 0) goto fail;
    if (r == 0) break;
    got += (size_t)r;
    if (memchr(line, '\n', got)) break;
  }
  line[got] = 0;
  line[strcspn(line, "\r\n")] = 0;
  close(fd);
  return 0;
fail:
  err = errno;
  close(fd);
  errno = err;
  return -1;
}

/* Copies `s` into `out` as JSON string content: quotes, backslashes and control characters escaped or dropped. */
static void json_text(const char *s, char *out, size_t size) {
  size_t o = 0;
  for (; *s && o + 3 < size; s++) {
    if (*s == '"' || *s == '\\') out[o++] = '\\';
    if ((unsigned char)*s >= 0x20) out[o++] = *s;
  }
  out[o] = 0;
}

/* A non-negative whole number from the environment; `fallback` when unset or not one. */
static long env_number(const char *name, long fallback) {
  const char *v = getenv(name);
  char *end;
  if (!v || !*v) return fallback;
  long n = strtol(v, &end, 10);
  return *end || n < 0 ? fallback : n;
}

/* Step 7: one line per connection attempt for `seconds`, every STREAM_PERIOD_MS. */
static void stream(long seconds, long t_start) {
  char line[200], text[420];
  long until = now_ms() + seconds * 1000L;
  for (int n = 1; now_ms() < until; n++) {
    line[0] = 0;
    int rc = dial_once(line, sizeof line, STREAM_TIMEOUT_MS);
    const char *dialled = outcome(rc, errno);
    json_text(line, text, sizeof text);
    printf("{\"attempt\":%d,\"t\":%ld,\"uid\":%u,\"euid\":%u,\"gid\":%u,\"egid\":%u,\"dial\":\"%s\",\"line\":\"%s\"}\n",
           n, now_ms() - t_start, getuid(), geteuid(), getgid(), getegid(), dialled, text);
    fflush(stdout);
    usleep(STREAM_PERIOD_MS * 1000);
  }
  printf("{\"event\":\"done\",\"t\":%ld}\n", now_ms() - t_start);
  fflush(stdout);
}

int main(void) {
  char prm[32], eff[32], bnd[32], nnp[8], line[200] = "", text[420];
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  long t_start = now_ms();
  unsigned proxy_id = (unsigned)env_number("BECOME_PROXY_ID", DEFAULT_PROXY_ID);
  long delay_s = env_number("BECOME_PROXY_DELAY_S", 0), stream_s = env_number("BECOME_PROXY_STREAM_S", 0);
  printf("{\"event\":\"start\",\"uid\":%u,\"gid\":%u,\"delay\":%ld}\n", getuid(), getgid(), delay_s);
  fflush(stdout);
  if (delay_s > 0) sleep((unsigned)delay_s);
  unsigned uid = getuid(), gid = getgid();
  status_field("CapPrm", prm, sizeof prm);
  status_field("CapEff", eff, sizeof eff);
  status_field("CapBnd", bnd, sizeof bnd);
  status_field("NoNewPrivs", nnp, sizeof nnp);

  int rc = raise_permitted();
  const char *raised = outcome(rc, errno);
  rc = setgid(proxy_id);
  const char *setgid_result = outcome(rc, errno);
  rc = setuid(proxy_id);
  const char *setuid_result = outcome(rc, errno);

  long t0 = now_ms();
  int attempts = 0;
  const char *dialled;
  for (;;) {
    attempts++;
    rc = dial_once(line, sizeof line, STEP_TIMEOUT_MS);
    dialled = outcome(rc, errno);
    if (rc == 0 || errno != ECONNREFUSED || now_ms() - t0 >= PROXY_WAIT_MS) break;
    usleep(RETRY_MS * 1000);
  }
  json_text(line, text, sizeof text);
  printf("{\"uid\":%u,\"gid\":%u,\"capPrm\":\"%s\",\"capEff\":\"%s\",\"capBnd\":\"%s\",\"noNewPrivs\":\"%s\","
         "\"raise\":\"%s\",\"setgid\":\"%s\",\"setuid\":\"%s\",\"uidAfter\":%u,\"gidAfter\":%u,"
         "\"dial\":\"%s\",\"line\":\"%s\",\"attempts\":%d,\"ms\":%ld,\"t\":%ld}\n",
         uid, gid, prm, eff, bnd, nnp, raised, setgid_result, setuid_result, getuid(), getgid(), dialled, text,
         attempts, now_ms() - t0, now_ms() - t_start);
  fflush(stdout);
  if (stream_s > 0) stream(stream_s, t_start);
  for (;;) pause();
}
