/* vk_entry.c — the Vulkan plugin's one exported symbol: version negotiation. */
#include "parity_support/negotiate.h"
#include "vk_internal.h"

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor,
                                                 const parity_host_api_t *host, parity_plugin_info_t *out) {
  (void)host_minor;
  int32_t st = psup_negotiate(host_major, out, "vulkan", "vulkan", "1.0.0");
  if (st != PARITY_STATUS_OK) return st;
  vkp_set_host(host);
  out->api = vkp_plugin_api();
  return PARITY_STATUS_OK;
}
