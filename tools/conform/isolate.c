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

/* Read a child's records from fd into rep until the end or a damaged record; the last running id
 * and the device summary being filled stay in *running and *b. */
static void drain(int fd, cf_report_t *rep, char running[112], cf_backend_summary_t **b, int *unavailable) {
  cf_backend_summary_t got;
  cf_result_t *r;
  for (char kind; read_all(fd, &kind, 1) == 0;) {
    if (kind == 'N' || kind == 'B') {
      if (read_all(fd, &got, sizeof got) != 0) break;
      if (kind == 'N') {
        if (!(*b = cf_report_add_backend(rep))) break;
        (*b)->first = rep->count;
      }
      if (*b) adopt(*b, &got);
      if (kind == 'N') snprintf(running, 112, "device.open");
    } else if (kind == 'C') {
      if (read_all(fd, running, 112) != 0) break;
      running[111] = 0;
    } else if (kind == 'R') {
      if (!(r = cf_report_add(rep))) break;
      if (read_all(fd, r, sizeof *r) != 0) {
        rep->count--;
        break;
      }
      count(*b, r);
    } else if (kind == 'U') {
      *unavailable = 1;
    } else {
      break;
    }
  }
}

/* The child's exit status (0..255), or -1 for a crash: a failed result naming the plugin, the
 * signal and the check or case that was running, added to rep and printed. */
static int outcome(int status, cf_report_t *rep, cf_backend_summary_t *b, const char *plugin, const char *running) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  const char *abbrev = sig ? sigabbrev_np(sig) : NULL;
  cf_result_t *r;
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

/* Run argv with records to records_fd and, when out_fd >= 0, its stdout and stderr there. */
static pid_t spawn(char **argv, int argc, int records_fd, int out_fd, int close_fd, const char *plugin) {
  char fdtext[16];
  snprintf(fdtext, sizeof fdtext, "%d", records_fd);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "parity-conform: cannot start a child for '%s' (fork: %s)\n", plugin, strerror(errno));
    return -1;
  }
  if (pid == 0) {
    if (close_fd >= 0) close(close_fd);
    if (out_fd >= 0 && (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0)) _exit(2);
    argv[argc] = "--child-fd";
    argv[argc + 1] = fdtext;
    argv[argc + 2] = NULL;
    execv("/proc/self/exe", argv);
    fprintf(stderr, "parity-conform: cannot run itself again for '%s': %s\n", plugin, strerror(errno));
    _exit(2);
  }
  return pid;
}

static int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return status;
}

int cf_isolate_exec(char **argv, int argc, cf_report_t *rep, const char *plugin, int *unavailable) {
  int fds[2];
  *unavailable = 0;
  if (pipe(fds) != 0) {
    fprintf(stderr, "parity-conform: cannot start a child for '%s' (pipe: %s)\n", plugin, strerror(errno));
    return -1;
  }
  pid_t pid = spawn(argv, argc, fds[1], -1, fds[0], plugin);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return -1;
  }
  char running[112] = "loading the plugin";
  cf_backend_summary_t *b = NULL;
  drain(fds[0], rep, running, &b, unavailable);
  close(fds[0]);
  return outcome(wait_child(pid), rep, b, plugin, running);
}

int cf_isolate_start(char **argv, int argc, const char *plugin, cf_isolate_job_t *j) {
  memset(j, 0, sizeof *j);
  j->pid = -1;
  snprintf(j->plugin, sizeof j->plugin, "%s", plugin);
  j->records = tmpfile();
  j->output = tmpfile();
  if (!j->records || !j->output) {
    fprintf(stderr, "parity-conform: cannot start a child for '%s' (temporary file: %s)\n", plugin, strerror(errno));
    cf_isolate_drop(j);
    return -1;
  }
  j->pid = spawn(argv, argc, fileno(j->records), fileno(j->output), -1, plugin);
  if (j->pid < 0) {
    cf_isolate_drop(j);
    return -1;
  }
  return 0;
}

/* Wait for the child, print its output whole when `print`, and read its records into rep. */
static int collect(cf_isolate_job_t *j, cf_report_t *rep, int *unavailable, int print) {
  *unavailable = 0;
  if (j->pid < 0) return -1;
  int status = j->reaped ? j->status : wait_child(j->pid);
  j->pid = -1;
  j->reaped = 0;
  if (print) cf_isolate_print(j);
  char running[112] = "loading the plugin";
  cf_backend_summary_t *b = NULL;
  if (lseek(fileno(j->records), 0, SEEK_SET) == 0) drain(fileno(j->records), rep, running, &b, unavailable);
  return outcome(status, rep, b, j->plugin, running);
}

void cf_isolate_print(cf_isolate_job_t *j) {
  fflush(stdout);
  char buf[8192];
  size_t got;
  if (!j->output) return;
  rewind(j->output);
  while ((got = fread(buf, 1, sizeof buf, j->output)) > 0) fwrite(buf, 1, got, stdout);
  fflush(stdout);
}

int cf_isolate_collect(cf_isolate_job_t *j, cf_report_t *rep, int *unavailable) {
  return collect(j, rep, unavailable, 0);
}

int cf_isolate_finish(cf_isolate_job_t *j, cf_report_t *rep, int *unavailable) {
  int code = collect(j, rep, unavailable, 1);
  cf_isolate_drop(j);
  return code;
}

int cf_isolate_wait_any(cf_isolate_job_t *const *jobs, size_t n) {
  for (;;) {
    int any = 0;
    for (size_t i = 0; i < n; i++) any |= jobs[i]->pid > 0 && !jobs[i]->reaped;
    if (!any) return -1;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      return -1; /* no child left: none of them can still be running */
    }
    for (size_t i = 0; i < n; i++)
      if (jobs[i]->pid == pid && !jobs[i]->reaped) {
        jobs[i]->status = status;
        jobs[i]->reaped = 1;
        return (int)i;
      }
    /* a child that is none of these (a part already given up on): go on waiting */
  }
}

void cf_isolate_drop(cf_isolate_job_t *j) {
  if (j->pid > 0 && !j->reaped) {
    kill(j->pid, SIGKILL);
    wait_child(j->pid);
  }
  if (j->records) fclose(j->records);
  if (j->output) fclose(j->output);
  j->records = j->output = NULL;
  j->pid = -1;
}
