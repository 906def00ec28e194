/* atomic_file.c — see atomic_file.h. */
#define _GNU_SOURCE
#include "parity_support/atomic_file.h"
#include "parity_support/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define fail psup_errorf

static const char *kind_of(mode_t m) {
  return S_ISDIR(m)                 ? "a folder"
         : S_ISFIFO(m)              ? "a FIFO"
         : S_ISCHR(m) || S_ISBLK(m) ? "a device"
         : S_ISSOCK(m)              ? "a socket"
                                    : "not a regular file";
}

/* the folder part of path into dir ("." when there is none) */
static void folder_of(const char *path, char *dir, size_t n) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, n, ".");
  else if (slash == path)
    snprintf(dir, n, "/");
  else
    snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* the target itself, or the file a symbolic link names, into out; its stat in *st (exists = 1) */
static int resolve(const char *target, unsigned flags, char *out, struct stat *st, int *exists, char *err, size_t n) {
  if (!target || !*target) return fail(err, n, "no file name given");
  if (strlen(target) >= PSUP_PATH_MAX)
    return fail(err, n, "path is longer than %d characters: '%.60s...'", PSUP_PATH_MAX - 1, target);
  snprintf(out, PSUP_PATH_MAX, "%s", target);
  struct stat ls;
  *exists = 0;
  if (lstat(target, &ls) != 0) {
    if (errno == ENOENT) return 0;
    return fail(err, n, "cannot write '%s': %s", target, strerror(errno));
  }
  if (S_ISLNK(ls.st_mode) && (flags & PSUP_ATOMIC_NO_FOLLOW)) return 0; /* the link is replaced */
  if (S_ISLNK(ls.st_mode)) {
    char real[PATH_MAX];
    if (!realpath(target, real)) {
      if (errno != ENOENT) return fail(err, n, "cannot write '%s': %s", target, strerror(errno));
      return 0; /* a dangling link: the link itself is replaced */
    }
    if (strlen(real) >= PSUP_PATH_MAX)
      return fail(err, n, "'%s' names a path longer than %d characters", target, PSUP_PATH_MAX - 1);
    snprintf(out, PSUP_PATH_MAX, "%s", real);
  }
  if (stat(out, st) != 0) return fail(err, n, "cannot write '%s': %s", target, strerror(errno));
  if (!S_ISREG(st->st_mode)) return fail(err, n, "cannot write '%s': it is %s", target, kind_of(st->st_mode));
  *exists = 1;
  return 0;
}

static int check_into(const char *target, unsigned flags, char *resolved, unsigned *mode, char *err, size_t n) {
  struct stat st;
  int exists;
  if (resolve(target, flags, resolved, &st, &exists, err, n) != 0) return -1;
  char dir[PSUP_PATH_MAX];
  folder_of(resolved, dir, sizeof dir);
  struct stat ds;
  if (stat(dir, &ds) != 0) return fail(err, n, "cannot write '%s': folder '%s': %s", target, dir, strerror(errno));
  if (!S_ISDIR(ds.st_mode)) return fail(err, n, "cannot write '%s': '%s' is not a folder", target, dir);
  /* a file can be made there (access() says yes to root even on /proc or a read-only mount) */
  char probe[PSUP_PATH_MAX + 32];
  snprintf(probe, sizeof probe, "%s/.parity-probe.XXXXXX", dir);
  int fd = mkostemp(probe, O_CLOEXEC);
  if (fd < 0) return fail(err, n, "cannot write '%s': cannot create a file in '%s': %s", target, dir, strerror(errno));
  close(fd);
  unlink(probe);
  *mode = exists ? (unsigned)(st.st_mode & 07777) : 0644u;
  return 0;
}

int psup_atomic_check(const char *target, char *err, size_t n) {
  char resolved[PSUP_PATH_MAX];
  unsigned mode;
  return check_into(target, 0, resolved, &mode, err, n);
}

int psup_atomic_open(psup_atomic_file *af, const char *target, unsigned flags, char *err, size_t n) {
  memset(af, 0, sizeof *af);
  if (check_into(target, flags, af->target, &af->mode, err, n) != 0) return -1;
  snprintf(af->temp, sizeof af->temp, "%s.tmp.XXXXXX", af->target);
  int fd = mkostemp(af->temp, O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    af->temp[0] = 0;
    return fail(err, n, "cannot write '%s': cannot create a temporary file beside it: %s", target, strerror(e));
  }
  if (fchmod(fd, (mode_t)af->mode) != 0 || !(af->f = fdopen(fd, "wb"))) {
    int e = errno;
    close(fd);
    unlink(af->temp);
    af->temp[0] = 0;
    return fail(err, n, "cannot write '%s': %s", target, strerror(e));
  }
  return 0;
}

void psup_atomic_abort(psup_atomic_file *af) {
  if (af->f) fclose(af->f);
  af->f = NULL;
  if (af->temp[0]) unlink(af->temp);
  af->temp[0] = 0;
}

int psup_atomic_commit(psup_atomic_file *af, char *err, size_t n) {
  if (!af->f || !af->temp[0]) return fail(err, n, "internal: commit of a file that is not open");
  int e = 0;
  if (ferror(af->f)) e = EIO;
  if (!e && fflush(af->f) != 0) e = errno;
  if (!e && fsync(fileno(af->f)) != 0) e = errno;
  if (fclose(af->f) != 0 && !e) e = errno;
  af->f = NULL;
  if (!e && rename(af->temp, af->target) != 0) e = errno;
  if (e) {
    unlink(af->temp);
    af->temp[0] = 0;
    return fail(err, n, "cannot write '%s': %s; the previous file, if any, is unchanged", af->target, strerror(e));
  }
  af->temp[0] = 0;
  char dir[PSUP_PATH_MAX];
  folder_of(af->target, dir, sizeof dir);
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) { /* the rename made durable; a file system that cannot fsync a folder is no error */
    if (fsync(dfd) != 0 && errno != EINVAL && errno != EROFS) e = errno;
    close(dfd);
  }
  if (e) return fail(err, n, "wrote '%s', but syncing its folder failed: %s", af->target, strerror(e));
  return 0;
}

int psup_atomic_write(const char *target, const void *data, size_t size, char *err, size_t n) {
  psup_atomic_file af;
  if (psup_atomic_open(&af, target, 0, err, n) != 0) return -1;
  if (size && fwrite(data, 1, size, af.f) != size) {
    int e = errno;
    psup_atomic_abort(&af);
    return fail(err, n, "cannot write '%s': %s; the previous file, if any, is unchanged", target,
                strerror(e ? e : EIO));
  }
  return psup_atomic_commit(&af, err, n);
}
