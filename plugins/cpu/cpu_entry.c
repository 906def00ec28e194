/* cpu_entry.c — the CPU plugin's one exported symbol: version negotiation. */
#include "cpu_internal.h"

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor,
                                                 const parity_host_api_t *host,
                                                 parity_plugin_info_t *out) {
  (void)host_minor; /* any 1.x host can drive a 1.0 plugin */
  if (!out || out->struct_size < offsetof(parity_plugin_info_t, api) + sizeof(void *))
    return PARITY_STATUS_INVALID_ARGUMENT;
  out->abi_major = PARITY_ABI_MAJOR;
  out->abi_minor = PARITY_ABI_MINOR;
  out->name = "cpu";
  out->backend = "cpu";
  out->version = "1.0.0";
  if (host_major != PARITY_ABI_MAJOR) {
    out->refusal = "the cpu plugin speaks ABI 1.x only";
    return PARITY_STATUS_VERSION_MISMATCH;
  }
  cpu_set_host(host);
  out->api = cpu_plugin_api();
  return PARITY_STATUS_OK;
}
