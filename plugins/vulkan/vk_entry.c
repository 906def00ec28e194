/* vk_entry.c — the Vulkan plugin's one exported symbol: version negotiation (the host kit's PSUP_KIT_QUERY). */
#include "vk_internal.h"

/* read by the host without loading the plugin (abi/parity_plugin.h, "identity note") */
PARITY_PLUGIN_IDENTITY(vulkan_identity, "vulkan", "vulkan", "1.0.0");

PSUP_KIT_QUERY(vkp_kit, vulkan_identity, vkp_plugin_api())
