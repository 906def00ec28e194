/* cu_entry.c — the CUDA plugin's one exported symbol: version negotiation. */
#include "cu_internal.h"
#include "parity_support/negotiate.h"

/* read by the host without loading the plugin (abi/parity_plugin.h, "identity note") */
PARITY_PLUGIN_IDENTITY(cuda_identity, "cuda", "cuda", "1.0.0");

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor,
                                                 const parity_host_api_t *host,
                                                 parity_plugin_info_t *out) {
  (void)host_minor;
  int32_t st = psup_negotiate(host_major, out, cuda_identity.name, cuda_identity.backend, cuda_identity.version);
  if (st != PARITY_STATUS_OK) return st;
  cu_set_host(host);
  out->api = cu_plugin_api();
  return PARITY_STATUS_OK;
}
