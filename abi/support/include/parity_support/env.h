/* env.h — how libparity and every plugin read the environment. */
#ifndef PARITY_SUPPORT_ENV_H
#define PARITY_SUPPORT_ENV_H

#include <stddef.h>

/* getenv, except that in a set-user-ID or otherwise privileged process (secure execution, see
 * secure_getenv(3)) every variable reads as unset: an environment override never steers plugin
 * search, caches or kernels of a privileged program. */
const char *psup_getenv(const char *name);

/* Checked reads (parse.h): an unset or empty variable gives `def` and 0; any other value must parse
 * whole and lie in range, else -1 with a message naming the variable, the value as written and
 * what is accepted (the caller refuses to start, or warns and says what it does instead: never a
 * silent fallback). */
int psup_env_double(const char *name, double lo, double hi, const char *unit, double def, double *out, char *err,
                    size_t n);
int psup_env_int(const char *name, long long lo, long long hi, long long def, long long *out, char *err, size_t n);
int psup_env_choice(const char *name, const char *const *choices, int def, int *out, char *err, size_t n);
int psup_env_flag(const char *name, int def, int *out, char *err, size_t n);

#endif
