/* cu_entry.c — the CUDA plugin's one exported symbol: version negotiation (the host kit's PSUP_KIT_QUERY). */
#include "cu_internal.h"

/* read by the host without loading the plugin (abi/parity_plugin.h, "identity note") */
PARITY_PLUGIN_IDENTITY(cuda_identity, "cuda", "cuda", "1.0.0");

PSUP_KIT_QUERY(cu_kit, cuda_identity, cu_plugin_api())
