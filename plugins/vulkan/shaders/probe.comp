#version 450
/* probe.comp — run once at device open: is fma() on doubles fused? io[0] = 1 + 2^-30 (from
 * memory, so nothing folds); a fused fma(a, a, -a*a) gives exactly 2^-60, a multiply and an add
 * give 0. The answer becomes specialization constant 3 of every kernel (pmath.glsl). */
#include "common.glsl"

OPERAND(0, io, double)

void main() {
  if (item_id() == 0u) {
    precise double a = io[0];
    precise double p = a * a;
    io[1] = fma(a, a, -p);
  }
}
