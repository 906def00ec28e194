/* vk_entry.c — the Vulkan plugin's one exported symbol: version negotiation. */
#include "parity_support/negotiate.h"
#include "vk_internal.h"

/* read by the host without loading the plugin (abi/parity_plugin.h, "identity note") */
PARITY_PLUGIN_IDENTITY(vulkan_identity, "vulkan", "vulkan", "1.0.0");

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor,
                                                 const parity_host_api_t *host, parity_plugin_info_t *out) {
  (void)host_minor;
  int32_t st = psup_negotiate(host_major, out, vulkan_identity.name, vulkan_identity.backend, vulkan_identity.version);
  if (st != PARITY_STATUS_OK) return st;
  vkp_set_host(host);
  out->api = vkp_plugin_api();
  return PARITY_STATUS_OK;
}
