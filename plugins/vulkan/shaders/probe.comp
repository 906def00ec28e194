/* (no #version: each variant is a generated wrapper that sets it, then includes this file) */
/* probe.comp — run once at device open: is fma() fused? probe_fma (doubles, for devices whose
 * f64 kernels run): io[0] = 1 + 2^-30 (from memory, so nothing folds); a fused fma(a, a, -a*a)
 * gives exactly 2^-60, a multiply and an add give 0; the same for floats with io[2] = 1 + 2^-12
 * (2^-24). probe_fma32 (-DPROBE_F32, no double: every device) does the float half on f32 words
 * io[0] = 1 + 2^-12 -> io[1]. The answers become specialization constants 3 and 4 of every
 * kernel (pmath.glsl; the float32 library and MULADD in common.glsl). */
#include "common.glsl"

#if defined(PROBE_F32)
OPERAND(0, io, float)

void main() {
  if (item_id() == 0u) {
    precise float f = io[0];
    precise float q = f * f;
    io[1] = fma(f, f, -q);
  }
}
#else
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
#endif
