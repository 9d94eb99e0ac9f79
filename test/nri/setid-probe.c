/*
 * test/nri/seccomp-runc.test.ts's probe: as root in a runc container, tries each set*id call the NRI plugin's
 * seccomp rules (nri/seccomp.go) must deny for the proxy's ID 1337 — and the same calls for another ID, which must
 * still work — each in a child of its own (a successful call changes the caller), and prints one line per call:
 * `<call> ok` or `<call> <errno name>`. Raw syscalls, so libc's all-threads set*id broadcast is not in the way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void try(const char *what, long nr, long a, long b, long c, int fs) {
  pid_t p = fork();
  if (p == 0) {
    errno = 0;
    long r = syscall(nr, a, b, c);
    const char *result;
    if (r == -1) /* seccomp's answer (or the kernel's) */
      result = strerrorname_np(errno) ? strerrorname_np(errno) : "failed";
    else if (fs) /* setfs*id returns the previous ID; asking with -1 changes nothing and returns the current one */
      result = syscall(nr, -1L, 0L, 0L) == a ? "ok" : "refused";
    else
      result = "ok";
    printf("%s %s\n", what, result);
    fflush(stdout);
    _exit(0);
  }
  int st;
  waitpid(p, &st, 0);
}

int main(void) {
  try("setuid(1000)", SYS_setuid, 1000, 0, 0, 0);
  try("setuid(1337)", SYS_setuid, 1337, 0, 0, 0);
  try("setuid(0x100000539)", SYS_setuid, 0x100000539L, 0, 0, 0);
  try("setreuid(-1,1337)", SYS_setreuid, -1, 1337, 0, 0);
  try("setresuid(-1,-1,1337)", SYS_setresuid, -1, -1, 1337, 0);
  try("setresuid(1000,1000,1000)", SYS_setresuid, 1000, 1000, 1000, 0);
  try("setfsuid(1337)", SYS_setfsuid, 1337, 0, 0, 1);
  try("setgid(1337)", SYS_setgid, 1337, 0, 0, 0);
  try("setresgid(1337,-1,-1)", SYS_setresgid, 1337, -1, -1, 0);
  try("setfsgid(1337)", SYS_setfsgid, 1337, 0, 0, 1);
  try("setgid(1000)", SYS_setgid, 1000, 0, 0, 0);
  return 0;
}
