/* env.h — how libparity and every plugin read the environment. */
#ifndef PARITY_SUPPORT_ENV_H
#define PARITY_SUPPORT_ENV_H

/* getenv, except that in a set-user-ID or otherwise privileged process (secure execution, see
 * secure_getenv(3)) every variable reads as unset: an environment override never steers plugin
 * search, caches or kernels of a privileged program. */
const char *psup_getenv(const char *name);

#endif
