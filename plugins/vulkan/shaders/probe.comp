#version 450
/* probe.comp — run once at device open: is fma() on doubles fused? io[0] = 1 + 2^-30 (from
 * memory, so nothing folds); a fused fma(a, a, -a*a) gives exactly 2^-60, a multiply and an add
 * give 0. The same for floats with 1 + 2^-12 (2^-24). The answers become specialization
 * constants 3 and 4 of every kernel (pmath.glsl, MULADD in common.glsl). */
#include "common.glsl"

OPERAND(0, io, double)

void main() {
  if (item_id() == 0u) {
    precise double a = io[0];
    precise double p = a * a;
    io[1] = fma(a, a, -p);
    precise float f = float(io[2]);
    precise float q = f * f;
    io[3] = double(fma(f, f, -q));
  }
}
