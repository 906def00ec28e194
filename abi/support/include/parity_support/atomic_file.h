/* atomic_file.h — the one way parity writes a file: weights, checkpoints, caches and reports.
 *
 * The data goes to a temporary file in the target's folder (same file system), which is written,
 * flushed, fsynced and renamed over the target; the folder is then fsynced, so the rename itself
 * survives a power cut. Until the rename the target is untouched: a crash, a kill, a full disk or a
 * file-size limit at any point leaves either the old file or the new one, never a mix, and a
 * failure removes the temporary file. A target that is a symbolic link is resolved first, so the
 * file it names is replaced and the link kept (PSUP_ATOMIC_NO_FOLLOW: the link itself is replaced,
 * as caches want, so a planted link never redirects a write).
 *
 * Use: psup_atomic_check(target) before any expensive work (so a bad target is refused at once),
 * psup_atomic_open, write to af.f, psup_atomic_commit (or psup_atomic_abort to give up). */
#ifndef PARITY_SUPPORT_ATOMIC_FILE_H
#define PARITY_SUPPORT_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

#define PSUP_PATH_MAX 4096
#define PSUP_ATOMIC_NO_FOLLOW 1u

typedef struct psup_atomic_file {
  FILE *f;                    /* write the content here */
  char target[PSUP_PATH_MAX]; /* the file replaced at commit (a link resolved) */
  char temp[PSUP_PATH_MAX + 32];
  unsigned mode; /* permissions of the new file: the old file's, else 0644 */
} psup_atomic_file;

/* Whether `target` may be written: the path fits PSUP_PATH_MAX, names either nothing or a regular
 * file (never a folder, FIFO, device or socket), and its folder exists and can be written. 0, or -1
 * with a message naming the path in err (an empty err buffer is allowed: n == 0). */
int psup_atomic_check(const char *target, char *err, size_t n);

/* psup_atomic_check, then create the temporary file (mkstemp beside the target). 0 with af->f open,
 * or -1 with the message in err and nothing created. */
int psup_atomic_open(psup_atomic_file *af, const char *target, unsigned flags, char *err, size_t n);

/* Flush, fsync and close af->f, rename the temporary over the target, fsync the folder. 0, or -1
 * with the message (the write error, "No space left on device", ...) in err; on failure the
 * temporary file is removed and the target is what it was. af->f is closed either way. */
int psup_atomic_commit(psup_atomic_file *af, char *err, size_t n);

/* Close and remove the temporary file; the target is untouched. Safe to call twice. */
void psup_atomic_abort(psup_atomic_file *af);

/* Convenience: write `size` bytes to `target` atomically. 0, or -1 with the message in err. */
int psup_atomic_write(const char *target, const void *data, size_t size, char *err, size_t n);

#endif
