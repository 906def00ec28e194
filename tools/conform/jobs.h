/* jobs.h — parity-conform --jobs N: the backends' runs as child processes (isolate.h), N at a time.
 * With parts > 1 each backend's selection is split into that many parts (`--part K/P` in the child:
 * contiguous runs of its selected cases, the checks in part 0), so that one backend that compiles
 * its kernels on first use keeps every core busy instead of one (lavapipe compiles some 480
 * pipelines for the default subset, about 0.2 s each, one at a time in a process); contiguous, so
 * that each part compiles the kernels of its own ops. A child that ends is replaced by the next
 * unit at once, whichever child it was. The parts' records are merged into one
 * summary per device, which the parent prints (header, then the parts' own lines, then the table
 * and verdict), so the console and every report read as one run's. */
#ifndef PARITY_CONFORM_JOBS_H
#define PARITY_CONFORM_JOBS_H

#include <stdint.h>

#include "conform.h"
#include "isolate.h"

/* args[0 .. nargs) is the child's command line without --backend; args must have room for 7 more
 * entries. named: the user named the backend (an unavailable one then fails the run). Returns
 * the run's exit status (0, 1, 2, as parity-conform's). */
int cf_jobs_run(char **args, int nargs, const char *const *backends, uint32_t nbackends, int jobs, int parts,
                const cf_console_t *con, cf_report_t *rep, int named);

/* The run's exit status after a backend whose child ended with `code` (as cf_isolate_exec's: -1 a
 * crash, 1 a failure, 2 could not run): a crash or failure makes it 1, a run that could not happen
 * 2, except an unavailable backend the user did not name. */
int cf_jobs_exit_code(int exit_code, int code, int unavailable, int named);

#endif
