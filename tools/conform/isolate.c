/* isolate.c — see isolate.h. Records on the pipe: one kind byte, then 'N' or 'B' a
 * cf_backend_summary_t, 'C' a 112-byte id, 'R' a cf_result_t, 'U' nothing. */
#define _GNU_SOURCE
#include "isolate.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_fd = -1;

void cf_child_attach(int fd) { child_fd = fd; }

static void send_record(char kind, const void *data, size_t size) {
  if (child_fd < 0) return;
  if (write(child_fd, &kind, 1) != 1) return;
  const char *p = data;
  while (size) {
    ssize_t w = write(child_fd, p, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    size -= (size_t)w;
  }
}

void cf_child_backend(const cf_backend_summary_t *b) { send_record('N', b, sizeof *b); }
void cf_child_result(const cf_result_t *r) { send_record('R', r, sizeof *r); }
void cf_child_summary(const cf_backend_summary_t *b) { send_record('B', b, sizeof *b); }
void cf_child_unavailable(void) { send_record('U', NULL, 0); }

void cf_child_running(const char *id) {
  char buf[112] = {0};
  snprintf(buf, sizeof buf, "%s", id);
  send_record('C', buf, sizeof buf);
}

static int read_all(int fd, void *data, size_t size) {
  char *p = data;
  while (size) {
    ssize_t r = read(fd, p, size);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    size -= (size_t)r;
  }
  return 0;
}

static void count(cf_backend_summary_t *b, const cf_result_t *r) {
  if (b) cf_backend_count(b, r);
}

/* the summary a record describes, with this process's range and counts */
static void adopt(cf_backend_summary_t *dst, const cf_backend_summary_t *src) {
  cf_backend_summary_t keep = *dst;
  *dst = *src;
  dst->first = keep.first;
  dst->count = keep.count;
  dst->pass = keep.pass;
  dst->fail = keep.fail;
  dst->unsupported = keep.unsupported;
  dst->skipped = keep.skipped;
}

int cf_isolate_exec(char **argv, int argc, cf_report_t *rep, const char *plugin, int *unavailable) {
  int fds[2];
  *unavailable = 0;
  fflush(stdout);
  fflush(stderr);
  if (pipe(fds) != 0) {
    fprintf(stderr, "parity-conform: cannot start a child for '%s' (pipe: %s)\n", plugin, strerror(errno));
    return -1;
  }
  char fdtext[16];
  snprintf(fdtext, sizeof fdtext, "%d", fds[1]);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "parity-conform: cannot start a child for '%s' (fork: %s)\n", plugin, strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    argv[argc] = "--child-fd";
    argv[argc + 1] = fdtext;
    argv[argc + 2] = NULL;
    execv("/proc/self/exe", argv);
    fprintf(stderr, "parity-conform: cannot run itself again for '%s': %s\n", plugin, strerror(errno));
    _exit(2);
  }
  close(fds[1]);
  char running[112] = "loading the plugin";
  cf_backend_summary_t *b = NULL, got;
  cf_result_t *r;
  for (char kind; read_all(fds[0], &kind, 1) == 0;) {
    if (kind == 'N' || kind == 'B') {
      if (read_all(fds[0], &got, sizeof got) != 0) break;
      if (kind == 'N') {
        if (!(b = cf_report_add_backend(rep))) break;
        b->first = rep->count;
      }
      if (b) adopt(b, &got);
      if (kind == 'N') snprintf(running, sizeof running, "device.open");
    } else if (kind == 'C') {
      if (read_all(fds[0], running, sizeof running) != 0) break;
      running[sizeof running - 1] = 0;
    } else if (kind == 'R') {
      if (!(r = cf_report_add(rep))) break;
      if (read_all(fds[0], r, sizeof *r) != 0) {
        rep->count--;
        break;
      }
      count(b, r);
    } else if (kind == 'U') {
      *unavailable = 1;
    } else {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  const char *abbrev = sig ? sigabbrev_np(sig) : NULL;
  if (!b && (b = cf_report_add_backend(rep)) != NULL) { /* it died before a device summary began */
    snprintf(b->backend, sizeof b->backend, "%s", plugin);
    snprintf(b->device, sizeof b->device, "(no device)");
    snprintf(b->type, sizeof b->type, "crashed");
    b->first = rep->count;
  }
  if (b && (r = cf_report_add(rep)) != NULL) {
    cf_result_init(r, "plugin.crash", "(plugin)", "-", "-", "crash");
    snprintf(r->backend, sizeof r->backend, "%s", plugin);
    snprintf(r->device, sizeof r->device, "%s", b->device);
    cf_result_fail(r, "plugin %s crashed with SIG%s in %s", plugin, abbrev ? abbrev : "?", running);
    count(b, r);
    snprintf(b->note, sizeof b->note, "crashed with SIG%s in %s", abbrev ? abbrev : "?", running);
  }
  printf("\nparity-conform: plugin %s crashed with SIG%s in %s; the other plugins are still tested\n", plugin,
         abbrev ? abbrev : "?", running);
  fflush(stdout);
  return -1;
}
