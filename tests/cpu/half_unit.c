/* half_unit.c — plugins/cpu/cpu_half.h against parity_support/dtype.h: every f16 widens to the
 * same f32 bits, and f32 values narrow to the same f16 bits for every sign and exponent with
 * mantissas at and around each rounding boundary (ties, half-ulps, subnormal steps, NaN
 * payloads). An exhaustive sweep of all 2^32 f32 inputs also agreed when the code was written. */
#include <criterion/criterion.h>
#include <string.h>

#include "cpu_half.h"
#include "parity_support/dtype.h"

Test(cpu_half, every_f16_widens_to_the_bits_of_psup_f16_to_f32) {
  for (uint32_t h = 0; h < 65536; h++) {
    float a = psup_f16_to_f32((uint16_t)h), b = cpu_f16_to_f32((uint16_t)h);
    uint32_t ba, bb;
    memcpy(&ba, &a, 4), memcpy(&bb, &b, 4);
    cr_assert_eq(ba, bb, "f16 0x%04x: psup 0x%08x, cpu 0x%08x", h, ba, bb);
  }
}

Test(cpu_half, f32_narrows_to_the_bits_of_psup_f32_to_f16_around_every_boundary) {
  /* low 16 bits of the f32 pattern: ties and neighbours of the f16 rounding points for
   * normal (bit 12) and subnormal (higher bits) results */
  static const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x2001, 0x3000,
                                  0x3fff, 0x4000, 0x5fff, 0x6000, 0x7fff, 0x8000, 0x8001, 0x9000, 0xbfff,
                                  0xc000, 0xdfff, 0xe000, 0xefff, 0xf000, 0xffff, 0x0800, 0x07ff, 0x0400};
  for (uint32_t hi = 0; hi < 65536; hi++)
    for (size_t l = 0; l < sizeof lows / sizeof *lows; l++) {
      uint32_t x = hi << 16 | lows[l];
      float f;
      memcpy(&f, &x, 4);
      uint16_t a = psup_f32_to_f16(f), b = cpu_f32_to_f16(f);
      cr_assert_eq(a, b, "f32 0x%08x: psup 0x%04x, cpu 0x%04x", x, a, b);
    }
}
