/* Lifetimes and the caching allocator: a context outlives what was made from it (reference
 * counts), a double release is refused with a message, and the cache gives memory back. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "core_test.h"

static parity_context_t *cpu_ctx(parity_device_t **dev) {
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = "cpu";
  o.log_level = 0;
  parity_context_t *ctx;
  OK(parity_context_create(&o, &ctx));
  OK(parity_context_default_device(ctx, dev));
  return ctx;
}

Test(lifetimes, tensors_released_after_their_context_was_destroyed_are_safe_and_still_usable) {
  parity_device_t *dev;
  parity_context_t *ctx = cpu_ctx(&dev);
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 3, (double[]){1, -2, 3}), *y;
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_unary(PARITY_OP_NEG, x, &y));
  parity_context_destroy(ctx);
  /* documented: the context and device stay alive while tensors made from them do */
  parity_tensor_t *z;
  OK(parity_unary(PARITY_OP_NEG, y, &z));
  expect_values(z, (double[]){1, -2, 3}, 3);
  parity_tensor_release(z);
  parity_tensor_release(y);
  parity_tensor_release(x);
}

/* A device holds its context while it has live storages (one reference, not one per storage):
 * after its last storage went, a new one must take the reference again. Under AddressSanitizer
 * (tools/ci-extra.sh) a reference taken or dropped once too often shows as a use after free or
 * a leak. */
Test(lifetimes, a_device_whose_storages_all_went_holds_its_context_again_for_new_ones) {
  parity_device_t *dev;
  parity_context_t *ctx = cpu_ctx(&dev);
  parity_tensor_t *a = vec(dev, PARITY_DTYPE_F32, 2, (double[]){1, 2});
  parity_tensor_release(a); /* the device has no storage now */
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 3, (double[]){4, -5, 6}), *y = NULL;
  OK(parity_unary(PARITY_OP_NEG, x, &y));
  parity_tensor_release(x);
  parity_context_destroy(ctx);
  parity_tensor_t *z = NULL;
  OK(parity_unary(PARITY_OP_NEG, y, &z));
  expect_values(z, (double[]){4, -5, 6}, 3);
  parity_tensor_release(y);
  parity_tensor_release(z);
}

Test(lifetimes, a_plan_destroyed_after_its_context_is_safe) {
  parity_device_t *dev;
  parity_context_t *ctx = cpu_ctx(&dev);
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  OK(parity_plan_end(plan));
  parity_context_destroy(ctx);
  OK(parity_plan_replay(plan));
  parity_plan_destroy(plan);
}

Test(lifetimes, a_double_release_is_refused_with_a_message) {
  parity_device_t *dev;
  parity_context_t *ctx = cpu_ctx(&dev);
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 2, (double[]){1, 2});
  parity_tensor_t *keep = vec(dev, PARITY_DTYPE_F64, 2, (double[]){7, 8});
  parity_tensor_release(x);
  parity_tensor_release(x);
  cr_assert(strstr(parity_last_error(), "tensor_release: the tensor was already released"), "%s", parity_last_error());
  cr_assert_null(parity_tensor_retain(x));
  expect_values(keep, (double[]){7, 8}, 2); /* nothing else was disturbed */
  parity_tensor_release(keep);
  parity_context_destroy(ctx);
}

static int64_t held;
static void count(void *user, int64_t delta) {
  (void)user;
  held += delta;
}

Test(cache, released_memory_is_kept_up_to_the_limit_and_trim_gives_it_back) {
  parity_device_t *dev;
  parity_context_t *ctx = cpu_ctx(&dev);
  parity_context_set_alloc_hook(ctx, count, NULL);
  parity_tensor_t *t[8];
  for (int i = 0; i < 8; i++) OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1 << 20}, &t[i]));
  cr_assert_eq(held, 8 << 22);
  for (int i = 0; i < 8; i++) parity_tensor_release(t[i]);
  cr_assert_eq(parity_device_cache_bytes(dev), 8u << 22, "released storage is cached for reuse");
  cr_assert_eq(held, 8 << 22);
  cr_assert_eq(parity_device_trim_cache(dev), 8u << 22);
  cr_assert_eq(parity_device_cache_bytes(dev), 0);
  cr_assert_eq(held, 0, "trim returned every byte to the plugin");
  parity_context_destroy(ctx);
}

Test(cache, the_limit_comes_from_parity_cache_limit) {
  setenv("PARITY_CACHE_LIMIT", "5M", 1);
  parity_device_t *dev;
  parity_context_t *ctx = cpu_ctx(&dev);
  parity_context_set_alloc_hook(ctx, count, NULL);
  parity_tensor_t *t[3];
  for (int i = 0; i < 3; i++) OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1 << 20}, &t[i]));
  for (int i = 0; i < 3; i++) parity_tensor_release(t[i]);
  cr_assert_eq(parity_device_cache_bytes(dev), 4u << 20, "one 4 MiB buffer fits under 5 MiB, not two");
  cr_assert_eq(held, 4 << 20);
  parity_context_destroy(ctx);
}

/* A buffer that would pass the limit makes room by giving back cached buffers of other sizes,
 * the largest first, and is kept: the size released last is the one a loop asks for next. */
Test(cache, a_new_size_over_the_limit_evicts_other_sizes_largest_first) {
  setenv("PARITY_CACHE_LIMIT", "6M", 1);
  parity_device_t *dev;
  parity_context_t *ctx = cpu_ctx(&dev);
  held = 0;
  parity_context_set_alloc_hook(ctx, count, NULL);
  parity_tensor_t *a, *b, *c, *d;
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1 << 18}, &a)); /* 1 MiB */
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1 << 19}, &b)); /* 2 MiB */
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1 << 20}, &c)); /* 4 MiB */
  parity_tensor_release(a);
  parity_tensor_release(b);
  cr_assert_eq(parity_device_cache_bytes(dev), 3u << 20);
  parity_tensor_release(c); /* 3 + 4 > 6: the 2 MiB buffer goes, the 1 MiB one stays */
  cr_assert_eq(parity_device_cache_bytes(dev), 5u << 20, "cached %llu",
               (unsigned long long)parity_device_cache_bytes(dev));
  cr_assert_eq(held, 5 << 20, "the evicted buffer went back to the plugin");
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1 << 20}, &d)); /* reuses the 4 MiB one */
  cr_assert_eq(held, 5 << 20);
  cr_assert_eq(parity_device_cache_bytes(dev), 1u << 20);
  parity_tensor_release(d);
  /* a buffer larger than the whole limit evicts nothing and is given back */
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1 << 21}, &a)); /* 8 MiB */
  parity_tensor_release(a);
  cr_assert_eq(parity_device_cache_bytes(dev), 5u << 20);
  cr_assert_eq(held, 5 << 20);
  parity_context_destroy(ctx);
}

Test(cache, a_malformed_limit_is_refused_with_the_value_as_written) {
  setenv("PARITY_CACHE_LIMIT", "lots", 1);
  parity_context_t *ctx = NULL;
  cr_assert_eq(parity_context_create(NULL, &ctx), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_null(ctx);
  cr_assert(strstr(parity_last_error(), "PARITY_CACHE_LIMIT='lots' is not a size"), "%s", parity_last_error());
  unsetenv("PARITY_CACHE_LIMIT");
}

Test(lifetimes, releasing_a_300000_op_chain_does_not_overflow_the_stack, .timeout = 120) {
  parity_device_t *dev;
  parity_context_t *ctx = cpu_ctx(&dev);
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F32, 1, (double[]){1}), *y = parity_tensor_retain(x);
  OK(parity_tensor_set_requires_grad(x, 1));
  for (int i = 0; i < 300000; i++) { /* each result holds its node, which holds the previous result */
    parity_tensor_t *z;
    OK(parity_unary(PARITY_OP_NEG, y, &z));
    parity_tensor_release(y);
    y = z;
  }
  parity_tensor_release(y); /* the whole chain goes here */
  parity_tensor_release(x);
  parity_context_destroy(ctx);
}
