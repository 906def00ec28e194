/* parse.h — the one checked parser of numbers and enumerated words, for environment variables
 * (env.h) and command-line options alike. The whole text must be the value (no trailing bytes, no
 * empty text), a number must be finite and inside [lo, hi], and a word one of the choices; anything
 * else is refused with a message that quotes the text as written and states what is accepted. */
#ifndef PARITY_SUPPORT_PARSE_H
#define PARITY_SUPPORT_PARSE_H

#include <stddef.h>

/* `what` names the value in messages: "PARITY_DIST_TIMEOUT", "--epochs". 0, or -1 with e.g.
 * "PARITY_DIST_TIMEOUT='nan' is not a finite number; expected seconds in [0.001, 86400]" in err.
 * `unit` (may be NULL) is the word before the range: "seconds". */
int psup_parse_double(const char *what, const char *text, double lo, double hi, const char *unit, double *out,
                      char *err, size_t n);
/* Decimal integers only (no hex, no fraction, no exponent). */
int psup_parse_int(const char *what, const char *text, long long lo, long long hi, long long *out, char *err, size_t n);
/* `choices` is NULL-terminated; *out is the index of the matching word (exact, case-sensitive). */
int psup_parse_choice(const char *what, const char *text, const char *const *choices, int *out, char *err, size_t n);
/* 0/1, off/on, no/yes, false/true into *out = 0 or 1. */
int psup_parse_flag(const char *what, const char *text, int *out, char *err, size_t n);

/* The choice closest to `word` by edit distance (letters inserted, deleted, changed or swapped),
 * when it is close enough to be a likely typo (at most 1 edit for words up to 4 letters, 2 beyond);
 * NULL otherwise. For "did you mean ...?" in messages. */
const char *psup_closest(const char *word, const char *const *choices, size_t count);

/* Format a message into err (n may be 0: nothing written); returns -1, for "return psup_errorf(...)". */
int psup_errorf(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
