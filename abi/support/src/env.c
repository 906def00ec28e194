/* env.c — environment reads (see env.h). */
#define _GNU_SOURCE
#include "parity_support/env.h"
#include "parity_support/parse.h"

#include <stdlib.h>

const char *psup_getenv(const char *name) { return secure_getenv(name); }

static const char *value(const char *name) {
  const char *v = psup_getenv(name);
  return v && *v ? v : NULL;
}

int psup_env_double(const char *name, double lo, double hi, const char *unit, double def, double *out, char *err,
                    size_t n) {
  const char *v = value(name);
  *out = def;
  return v ? psup_parse_double(name, v, lo, hi, unit, out, err, n) : 0;
}

int psup_env_int(const char *name, long long lo, long long hi, long long def, long long *out, char *err, size_t n) {
  const char *v = value(name);
  *out = def;
  return v ? psup_parse_int(name, v, lo, hi, out, err, n) : 0;
}

int psup_env_choice(const char *name, const char *const *choices, int def, int *out, char *err, size_t n) {
  const char *v = value(name);
  *out = def;
  return v ? psup_parse_choice(name, v, choices, out, err, n) : 0;
}

int psup_env_flag(const char *name, int def, int *out, char *err, size_t n) {
  const char *v = value(name);
  *out = def;
  return v ? psup_parse_flag(name, v, out, err, n) : 0;
}
