/* parity.h is what an application needs, and only that: the raw device API (buffers, descriptors
 * run directly) lives in parity/device.h. Declaring a function of the same name with another
 * signature compiles only where parity.h does not declare it. */
#include "parity/parity.h"

#include <criterion/criterion.h>

#ifdef PARITY_DEVICE_H
#error "parity.h must not include parity/device.h"
#endif
/* would conflict with parity_buffer_alloc's declaration if parity.h still had it */
static int parity_buffer_alloc(void) { return 7; }

Test(headers, parity_h_has_no_raw_device_api) {
  cr_assert_eq(parity_buffer_alloc(), 7);
  cr_assert_eq(parity_device_synchronize(NULL), PARITY_STATUS_INVALID_ARGUMENT);
}
