/* cl_entry.c — the OpenCL plugin's one exported symbol: version negotiation (the host kit's PSUP_KIT_QUERY). */
#include "cl_internal.h"

/* read by the host without loading the plugin (abi/parity_plugin.h, "identity note") */
PARITY_PLUGIN_IDENTITY(opencl_identity, "opencl", "opencl", "1.0.0");

PSUP_KIT_QUERY(ocl_kit, opencl_identity, ocl_plugin_api())
