/* parity.h is what an application needs, and only that: the raw device API (buffers, descriptors
 * run directly) lives in parity/device.h, the plugin ABI in parity_plugin.h (an application sees
 * only parity_types.h of it). Declaring a name parity.h must not declare compiles only where it
 * does not. */
#include "parity/parity.h"

#include <criterion/criterion.h>

#ifdef PARITY_DEVICE_H
#error "parity.h must not include parity/device.h"
#endif
#ifdef PARITY_PLUGIN_H
#error "parity.h must not include the plugin ABI (parity_plugin.h)"
#endif
/* would conflict with the ABI's descriptor types and function table if parity.h still had them */
typedef int parity_op_desc_t;
typedef int parity_plugin_api_t;
/* would conflict with parity_buffer_alloc's declaration if parity.h still had it */
static int parity_buffer_alloc(void) { return 7; }

Test(headers, parity_h_has_no_raw_device_api) {
  cr_assert_eq(parity_buffer_alloc(), 7);
  parity_op_desc_t desc = 3;
  parity_plugin_api_t api = 4;
  cr_assert_eq(desc + api, 7);
  cr_assert_eq(parity_device_synchronize(NULL), PARITY_STATUS_INVALID_ARGUMENT);
}
