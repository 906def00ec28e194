/* parse.c — see parse.h. */
#include "parity_support/parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int psup_errorf(char *err, size_t n, const char *fmt, ...) {
  if (n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
  }
  return -1;
}
#define fail psup_errorf

/* the text as written, cut to 40 characters for a message */
#define QUOTE(text) (strlen(text) > 40 ? 40 : (int)strlen(text)), (text), (strlen(text) > 40 ? "..." : "")

int psup_parse_double(const char *what, const char *text, double lo, double hi, const char *unit, double *out,
                      char *err, size_t n) {
  const char *u = unit ? unit : "a number";
  if (!text) text = "";
  char *end = NULL;
  errno = 0;
  double v = *text ? strtod(text, &end) : 0;
  if (!*text || !end || *end || end == text || isspace((unsigned char)*text))
    return fail(err, n, "%s='%.*s%s' is not a number; expected %s in [%g, %g]", what, QUOTE(text), u, lo, hi);
  if (!isfinite(v))
    return fail(err, n, "%s='%.*s%s' is not a finite number; expected %s in [%g, %g]", what, QUOTE(text), u, lo, hi);
  if (v < lo || v > hi || (errno == ERANGE && v == 0 && lo > 0))
    return fail(err, n, "%s='%.*s%s' is out of range; expected %s in [%g, %g]", what, QUOTE(text), u, lo, hi);
  *out = v;
  return 0;
}

int psup_parse_int(const char *what, const char *text, long long lo, long long hi, long long *out, char *err,
                   size_t n) {
  if (!text) text = "";
  const char *p = text + (*text == '-' || *text == '+');
  int digits = *p != 0;
  for (const char *q = p; *q; q++) digits &= *q >= '0' && *q <= '9';
  if (!digits)
    return fail(err, n, "%s='%.*s%s' is not a whole number; expected an integer in [%lld, %lld]", what, QUOTE(text), lo,
                hi);
  errno = 0;
  long long v = strtoll(text, NULL, 10);
  if (errno == ERANGE || v < lo || v > hi)
    return fail(err, n, "%s='%.*s%s' is out of range; expected an integer in [%lld, %lld]", what, QUOTE(text), lo, hi);
  *out = v;
  return 0;
}

/* optimal string alignment distance, capped: words longer than 63 bytes are never close */
static int distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63) return 99;
  int d[64][64];
  for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
      int v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb];
}

const char *psup_closest(const char *word, const char *const *choices, size_t count) {
  if (!word || !*word) return NULL;
  const char *best = NULL;
  int best_d = strlen(word) <= 4 ? 1 : 2;
  for (size_t i = 0; i < count; i++) {
    if (!choices[i]) continue;
    int d = distance(word, choices[i]);
    if (d <= best_d && (!best || d < distance(word, best))) best = choices[i];
  }
  return best;
}

int psup_parse_choice(const char *what, const char *text, const char *const *choices, int *out, char *err, size_t n) {
  if (!text) text = "";
  for (int i = 0; choices[i]; i++)
    if (strcmp(text, choices[i]) == 0) {
      *out = i;
      return 0;
    }
  char list[256] = "";
  size_t used = 0;
  for (int i = 0; choices[i] && used < sizeof list; i++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
    if (w < 0) break;
    used += (size_t)w;
  }
  size_t count = 0;
  while (choices[count]) count++;
  const char *near = psup_closest(text, choices, count);
  if (near) return fail(err, n, "%s='%.*s%s' is not one of %s; did you mean %s?", what, QUOTE(text), list, near);
  return fail(err, n, "%s='%.*s%s' is not one of %s", what, QUOTE(text), list);
}

int psup_parse_flag(const char *what, const char *text, int *out, char *err, size_t n) {
  static const char *const words[] = {"0", "1", "off", "on", "no", "yes", "false", "true", NULL};
  int i;
  if (psup_parse_choice(what, text, words, &i, err, n) != 0) return -1;
  *out = i & 1;
  return 0;
}
