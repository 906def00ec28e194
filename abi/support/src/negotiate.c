/* negotiate.c — see negotiate.h. */
#include "parity_support/negotiate.h"

int32_t psup_negotiate(uint32_t host_major, parity_plugin_info_t *out, const char *name, const char *backend,
                       const char *version) {
  if (!out || out->struct_size < offsetof(parity_plugin_info_t, api) + sizeof(void *))
    return PARITY_STATUS_INVALID_ARGUMENT;
  out->abi_major = PARITY_ABI_MAJOR;
  out->abi_minor = PARITY_ABI_MINOR; /* any 1.x host can drive a 1.y plugin: extra fields are sized */
  out->name = name;
  out->backend = backend;
  out->version = version;
  if (host_major != PARITY_ABI_MAJOR) {
    out->refusal = "this plugin speaks ABI 1.x only";
    return PARITY_STATUS_VERSION_MISMATCH;
  }
  return PARITY_STATUS_OK;
}
