/* args.h — parity-train's one statement of argument checking: every number through the checked
 * parser (parity_support/parse.h: the whole text, finite, in range), every name from a list; a failure prints "parity-train: <what> (see parity-train
 * --help)" and the caller exits 2. */
#ifndef PARITY_TRAIN_ARGS_H
#define PARITY_TRAIN_ARGS_H

/* Print the message and return 2 (the exit status of bad usage). */
int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 0 and *out set when v is a whole integer in [lo, hi]; else bad(...). */
int parse_long(const char *opt, const char *v, long lo, long hi, long *out);
/* 0 and *out set when v is a finite number in [lo, hi]; else bad(...). */
int parse_double(const char *opt, const char *v, double lo, double hi, double *out);
/* 0 and *out = index of v in the NULL-terminated names; else bad(...) listing them. */
int parse_name(const char *opt, const char *v, const char *const *names, int *out);

#endif
