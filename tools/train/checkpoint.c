/* checkpoint.c — parity-train's checkpoints (checkpoint.h), on libparity's parity_checkpoint_save
 * and parity_checkpoint_load. */
#define _POSIX_C_SOURCE 200809L
#include "checkpoint.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parity/safetensors.h"

#define STEP_KEY "parity-train.step"

void ckpt_meta_add(ckpt_meta *m, const char *key, const char *fmt, ...) {
  if (m->count >= sizeof m->keys / sizeof *m->keys) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->values[m->count], sizeof m->values[m->count], fmt, ap);
  va_end(ap);
  m->keys[m->count++] = key;
}

int ckpt_dir_check(const char *dir, char *err, size_t errlen) {
  struct stat sb;
  if (stat(dir, &sb) != 0) return snprintf(err, errlen, "'%s': %s", dir, strerror(errno)), -1;
  if (!S_ISDIR(sb.st_mode)) return snprintf(err, errlen, "'%s' is not a folder", dir), -1;
  if (access(dir, W_OK | X_OK) != 0)
    return snprintf(err, errlen, "'%s' cannot be written: %s", dir, strerror(errno)), -1;
  return 0;
}

static void path_of(char *out, size_t n, const char *dir, const char *model, int prev) {
  snprintf(out, n, "%s/%s%s.safetensors", dir, model, prev ? ".prev" : "");
}

int ckpt_save(const char *dir, const char *model, const char *const *names, parity_tensor_t *const *p, uint32_t n,
              parity_optimizer_t *opt, const ckpt_meta *meta, uint64_t step, char *err, size_t errlen) {
  char cur[4096], prev[4096];
  path_of(cur, sizeof cur, dir, model, 0);
  path_of(prev, sizeof prev, dir, model, 1);
  const char *keys[16], *vals[16];
  char stepv[32];
  size_t k = 0;
  for (; k < meta->count; k++) keys[k] = meta->keys[k], vals[k] = meta->values[k];
  snprintf(stepv, sizeof stepv, "%llu", (unsigned long long)step);
  keys[k] = STEP_KEY;
  vals[k++] = stepv;
  /* the current file stays complete until the new one is renamed over it; kept as .prev first */
  if (access(cur, F_OK) == 0 && rename(cur, prev) != 0)
    return snprintf(err, errlen, "cannot keep '%s' as '%s': %s", cur, prev, strerror(errno)), -1;
  if (parity_checkpoint_save(cur, names, p, n, opt, keys, vals, k) != PARITY_STATUS_OK)
    return snprintf(err, errlen, "%s", parity_last_error()), -1;
  return 0;
}

/* the file's run against this run's, before anything is loaded */
static int same_run(const char *path, const ckpt_meta *meta, uint64_t *step, char *err, size_t errlen) {
  parity_st_file f;
  if (parity_st_open(path, &f, err, errlen)) return -1;
  int rc = 0;
  for (size_t i = 0; i < meta->count && !rc; i++) {
    const char *v = parity_st_metadata(&f, meta->keys[i]);
    if (!v || strcmp(v, meta->values[i]))
      rc = -1, snprintf(err, errlen, "%.512s: written by another run: %s is %s%.60s%s here %s", path, meta->keys[i],
                        v ? "'" : "", v ? v : "missing", v ? "'," : ",", meta->values[i]);
  }
  const char *s = parity_st_metadata(&f, STEP_KEY);
  char *end = NULL;
  errno = 0;
  unsigned long long v = s ? strtoull(s, &end, 10) : 0;
  if (!rc && (!s || !*s || *end || errno))
    rc = -1, snprintf(err, errlen, "%.512s: no valid " STEP_KEY " in its metadata", path);
  if (!rc) *step = v;
  parity_st_free(&f);
  return rc;
}

int ckpt_load(const char *dir, const char *model, const char *const *names, parity_tensor_t *const *p, uint32_t n,
              parity_optimizer_t *opt, const ckpt_meta *meta, uint64_t *step, char *note, size_t notelen, char *err,
              size_t errlen) {
  if (note && notelen) note[0] = 0;
  char why[2][1024] = {"", ""};
  int present = 0;
  for (int prev = 0; prev < 2; prev++) {
    char path[4096];
    path_of(path, sizeof path, dir, model, prev);
    if (access(path, F_OK) != 0) {
      snprintf(why[prev], sizeof why[prev], "%.512s: %s", path, strerror(errno));
      continue;
    }
    present = 1;
    uint64_t s = 0;
    if (same_run(path, meta, &s, why[prev], sizeof why[prev])) continue;
    if (parity_checkpoint_load(path, names, p, n, opt, 0) != PARITY_STATUS_OK) {
      snprintf(why[prev], sizeof why[prev], "%s", parity_last_error());
      continue;
    }
    *step = s;
    if (prev && note) snprintf(note, notelen, "the newest checkpoint was refused (%s); resumed from %s", why[0], path);
    return 0;
  }
  if (!present) return 1;
  snprintf(err, errlen, "no checkpoint of %s in '%s' could be loaded: %s; %s", model, dir, why[0], why[1]);
  return -1;
}
