/* args.c — argument parsing shared by parity-train's modes (see args.h). */
#include "args.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/parse.h"

int bad(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "parity-train: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see parity-train --help)\n");
  va_end(ap);
  return 2;
}

int parse_long(const char *opt, const char *v, long lo, long hi, long *out) {
  char err[256];
  long long x;
  if (psup_parse_int(opt, v, lo, hi, &x, err, sizeof err)) return bad("%s", err);
  *out = (long)x;
  return 0;
}

int parse_double(const char *opt, const char *v, double lo, double hi, double *out) {
  char err[256];
  if (psup_parse_double(opt, v, lo, hi, NULL, out, err, sizeof err)) return bad("%s", err);
  return 0;
}

/* index of v in the NULL-terminated names, or an error listing them */
int parse_name(const char *opt, const char *v, const char *const *names, int *out) {
  for (int i = 0; names[i]; i++)
    if (!strcmp(v, names[i])) {
      *out = i;
      return 0;
    }
  char list[128] = "";
  for (int i = 0; names[i]; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
  return bad("%s must be one of %s, not '%s'", opt, list, v);
}
