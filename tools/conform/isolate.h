/* isolate.h — parity-conform tests each plugin in a child process. The parent identifies the
 * plugins without initialising any (parity_context_plugin_peek), then runs this program again per
 * plugin (`--backend NAME --child-fd N`, in process there), which loads only that plugin and the CPU
 * oracle and streams every result to the parent as it completes, with the id of the check or case
 * about to run. A plugin that crashes (SIGSEGV in a kernel, an abort in its driver, a fault while it
 * initialises) takes only its child down: the parent records a failed result "plugin NAME crashed
 * with SIGSEGV in ID", prints it, and goes on with the other plugins. --in-process turns it off. */
#ifndef PARITY_CONFORM_ISOLATE_H
#define PARITY_CONFORM_ISOLATE_H

#include <stdio.h>
#include <sys/types.h>

#include "conform.h"

/* Child side: every call is a no-op unless cf_child_attach was given the parent's pipe. */
void cf_child_attach(int fd);
void cf_child_backend(const cf_backend_summary_t *b); /* a device's summary begins (name set) */
void cf_child_running(const char *id);                /* a check or case is about to run */
void cf_child_result(const cf_result_t *r);           /* it finished */
void cf_child_summary(const cf_backend_summary_t *b); /* the device's summary, at its end */
void cf_child_unavailable(void);                      /* the plugin did not load: nothing tested */

/* Parent side: run argv (this program, NULL-terminated; "--child-fd" and the pipe's number are
 * appended) and stream its records into rep. Returns the child's exit status (0..255); -1 when it
 * crashed (a failed result "plugin.crash" naming `plugin`, the signal and the running id was added
 * and printed) or could not start. *unavailable: the child said its plugin did not load. */
int cf_isolate_exec(char **argv, int argc, cf_report_t *rep, const char *plugin, int *unavailable);

/* Several children at once (--jobs): each child's records and its console output go to temporary
 * files; cf_isolate_finish waits for it, prints its output whole and reads its records into rep as
 * cf_isolate_exec would, so the reports are the same and each backend's console output stays in
 * one piece, in the order the children were finished. */
typedef struct cf_isolate_job_t {
  pid_t pid;
  FILE *records, *output;
  char plugin[64];
  int status, reaped; /* cf_isolate_wait_any saw it end with this waitpid status */
} cf_isolate_job_t;
int cf_isolate_start(char **argv, int argc, const char *plugin, cf_isolate_job_t *j); /* 0, or -1 (said why) */
int cf_isolate_finish(cf_isolate_job_t *j, cf_report_t *rep, int *unavailable);       /* as cf_isolate_exec */
/* cf_isolate_finish without printing the output or forgetting the child: cf_isolate_print, then
 * cf_isolate_drop, when the caller is ready (--jobs prints a split backend's parts after merging). */
int cf_isolate_collect(cf_isolate_job_t *j, cf_report_t *rep, int *unavailable);
void cf_isolate_print(cf_isolate_job_t *j);
void cf_isolate_drop(cf_isolate_job_t *j); /* kill and forget a child that was started */
/* Wait until one of the n running children ends (any order: the first to end); returns its index,
 * or -1 when none of them is running. Its cf_isolate_collect then does not wait. */
int cf_isolate_wait_any(cf_isolate_job_t *const *jobs, size_t n);

#endif
