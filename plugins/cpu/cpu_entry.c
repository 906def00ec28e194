/* cpu_entry.c — the CPU plugin's one exported symbol: version negotiation. */
#include "cpu_internal.h"
#include "parity_support/negotiate.h"

/* read by the host without loading the plugin (abi/parity_plugin.h, "identity note") */
PARITY_PLUGIN_IDENTITY(cpu_identity, "cpu", "cpu", "1.0.0");

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor,
                                                 const parity_host_api_t *host, parity_plugin_info_t *out) {
  (void)host_minor;
  int32_t st = psup_negotiate(host_major, out, cpu_identity.name, cpu_identity.backend, cpu_identity.version);
  if (st != PARITY_STATUS_OK) return st;
  cpu_set_host(host);
  out->api = cpu_plugin_api();
  return PARITY_STATUS_OK;
}
