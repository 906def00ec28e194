/* cl_entry.c — the OpenCL plugin's one exported symbol: version negotiation. */
#include "cl_internal.h"

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor,
                                                 const parity_host_api_t *host,
                                                 parity_plugin_info_t *out) {
  (void)host_minor; /* any 1.x host can drive a 1.0 plugin */
  if (!out || out->struct_size < offsetof(parity_plugin_info_t, api) + sizeof(void *))
    return PARITY_STATUS_INVALID_ARGUMENT;
  out->abi_major = PARITY_ABI_MAJOR;
  out->abi_minor = PARITY_ABI_MINOR;
  out->name = "opencl";
  out->backend = "opencl";
  out->version = "1.0.0";
  if (host_major != PARITY_ABI_MAJOR) {
    out->refusal = "the opencl plugin speaks ABI 1.x only";
    return PARITY_STATUS_VERSION_MISMATCH;
  }
  ocl_set_host(host);
  out->api = ocl_plugin_api();
  return PARITY_STATUS_OK;
}
