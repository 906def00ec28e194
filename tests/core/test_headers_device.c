/* device.h compiles on its own, and parity.h — what an application includes — no longer declares
 * the raw device API (this file checks both: it includes device.h only, and asks the
 * preprocessor whether parity.h alone would have defined the device header's guard). */
#include "parity/device.h"

#include <criterion/criterion.h>

Test(headers, device_h_stands_alone) {
  cr_assert_eq(parity_device_run(NULL, NULL), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_buffer_size(NULL), 0);
}
