/* negotiate.h — the version handshake every plugin's parity_plugin_query performs. */
#ifndef PARITY_SUPPORT_NEGOTIATE_H
#define PARITY_SUPPORT_NEGOTIATE_H

#include "parity_plugin.h"

/* Answer for a plugin built against this header (PARITY_ABI_MAJOR.MINOR): fills name, backend,
 * version and the ABI version into out. Returns PARITY_STATUS_OK when the host's major matches
 * (the caller then keeps `host` and sets out->api), VERSION_MISMATCH with out->refusal when it
 * does not, INVALID_ARGUMENT when out is too small to hold an answer. All strings are static. */
int32_t psup_negotiate(uint32_t host_major, parity_plugin_info_t *out, const char *name, const char *backend,
                       const char *version);

#endif
