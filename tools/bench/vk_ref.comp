#version 450
// vk_ref.comp — the raw Vulkan reference's kernel (tools/bench/vk_ref.c): the 2-element add of the
// prepared section's per-op figure, z = x + y over n elements, one invocation.
layout(local_size_x = 1) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(std430, binding = 2) writeonly buffer Z { float z[]; };
layout(push_constant) uniform P { int n; } p;
void main() {
  for (int i = 0; i < p.n; i++) z[i] = x[i] + y[i];
}
