/* env.c — environment reads (see env.h). */
#define _GNU_SOURCE
#include "parity_support/env.h"

#include <stdlib.h>

const char *psup_getenv(const char *name) { return secure_getenv(name); }
