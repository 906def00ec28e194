/* The plugin's host paths against a fake NVIDIA driver (fake_libcuda.c, found as libcuda.so.1
 * through LD_LIBRARY_PATH): the cuGetProcAddress table, device enumeration and info, buffers
 * (device memory is host memory in the fake), launch geometry of real kernel entries, the
 * PTX-version message, and a sticky error poisoning the context. Kernels do not run here. */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdlib.h>

#include "cu_test.h"
#include "parity_support/desc.h"

typedef struct {
  int launches;
  unsigned grid[3], block[3];
  char kernel[64];
  int module_loads;
  int jit_log_options;
} fake_stats_t;

static const parity_plugin_api_t *start(const char *mode) {
  setenv("FAKE_CUDA_MODE", mode, 1);
  const parity_plugin_api_t *api = ct_plugin();
  return api;
}

static fake_stats_t *stats(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(lib, "the fake driver is not loaded");
  fake_stats_t *s = dlsym(lib, "fake_cuda_stats");
  cr_assert_not_null(s);
  return s;
}

static int fake_allocations(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  int (*f)(void) = (int (*)(void))dlsym(lib, "fake_cuda_allocations");
  cr_assert_not_null(f);
  return f();
}

static parity_plugin_device_t *open0(const parity_plugin_api_t *api) {
  cr_assert_eq(api->init(), PARITY_STATUS_OK, "init: %s", ct_last_error);
  parity_plugin_device_t *dev = NULL;
  cr_assert_eq(api->device_open(0, &dev), PARITY_STATUS_OK, "device_open: %s", ct_last_error);
  return dev;
}

/* an op descriptor over contiguous f32 (or `dt`) tensors in one buffer */
typedef struct {
  parity_op_desc_t d;
  parity_tensor_desc_t t[6];
} op_t;

static void op_init(op_t *o, int32_t op, int32_t dir, uint32_t nin, uint32_t nout) {
  memset(o, 0, sizeof *o);
  o->d.struct_size = sizeof o->d;
  o->d.op = op;
  o->d.direction = dir;
  o->d.num_inputs = nin;
  o->d.num_outputs = nout;
  for (uint32_t i = 0; i < nin; i++) o->d.inputs[i] = &o->t[i];
  for (uint32_t i = 0; i < nout; i++) o->d.outputs[i] = &o->t[nin + i];
}

Test(cuda_fakedriver, one_gpu_with_truthful_capabilities) {
  const parity_plugin_api_t *api = start("ok");
  cr_assert_eq(api->init(), PARITY_STATUS_OK, "init: %s", ct_last_error);
  uint32_t n = 0;
  cr_assert_eq(api->get_device_count(&n), PARITY_STATUS_OK);
  cr_assert_eq(n, 1u);
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(api->get_device_info(0, &info), PARITY_STATUS_OK);
  cr_expect_str_eq(info.name, "Fake GPU (sm_90)");
  cr_expect_str_eq(info.driver, "CUDA 13.0 driver");
  cr_expect_eq(info.type, PARITY_DEVICE_TYPE_GPU);
  cr_expect_eq(info.memory_bytes, 1ull << 30);
  cr_expect_eq(info.dtype_mask, 0xfeu); /* f32 f64 f16 bf16 i32 i64 bool */
  cr_expect_eq(info.flags, (uint32_t)(PARITY_DEVICE_FLAG_FLOAT64 | PARITY_DEVICE_FLAG_DETERMINISTIC));
  cr_expect_eq(info.denormals, PARITY_DENORMALS_PRESERVED);
  cr_expect_eq(api->get_device_info(1, &info), PARITY_STATUS_OUT_OF_RANGE);
  api->shutdown();
}

static void buffers_round_trip(const char *mode) {
  const parity_plugin_api_t *api = start(mode);
  parity_plugin_device_t *dev = open0(api);
  parity_plugin_buffer_t *b = NULL, *z = NULL;
  cr_assert_eq(api->buffer_alloc(dev, 64, &b), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_assert_eq(api->buffer_alloc(dev, 0, &z), PARITY_STATUS_OK, "%s", ct_last_error);
  unsigned char in[64], out[64];
  for (int i = 0; i < 64; i++) in[i] = (unsigned char)i;
  cr_assert_eq(api->buffer_write(dev, b, 0, in, 64), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_assert_eq(api->buffer_read(dev, b, 0, out, 64), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_expect_arr_eq(in, out, 64);
  /* overlapping copy within one buffer: bytes 0..31 to 8..39 */
  cr_assert_eq(api->buffer_copy(dev, b, 0, b, 8, 32), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_assert_eq(api->buffer_read(dev, b, 0, out, 64), PARITY_STATUS_OK);
  for (int i = 0; i < 32; i++) cr_expect_eq(out[8 + i], (unsigned char)i, "byte %d", 8 + i);
  /* and backwards: bytes 8..39 to 0..31 (the fake refuses a plain copy of overlapping ranges) */
  cr_assert_eq(api->buffer_write(dev, b, 0, in, 64), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_assert_eq(api->buffer_copy(dev, b, 8, b, 0, 32), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_assert_eq(api->buffer_read(dev, b, 0, out, 64), PARITY_STATUS_OK);
  for (int i = 0; i < 32; i++) cr_expect_eq(out[i], (unsigned char)(8 + i), "byte %d", i);
  /* fills: every pattern size, aligned and not */
  const uint64_t pat8 = 0x0123456789abcdefull;
  const uint32_t pat4 = 0xdeadbeefu;
  const uint16_t pat2 = 0xa55au;
  const uint8_t pat1 = 0x7e;
  struct {
    uint64_t off, size;
    const void *p;
    uint32_t ps;
  } fills[] = {{0, 64, &pat8, 8}, {4, 24, &pat8, 8}, {8, 16, &pat4, 4}, {2, 8, &pat4, 4},
               {0, 6, &pat2, 2},  {1, 6, &pat2, 2},  {5, 3, &pat1, 1}};
  for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
    unsigned char want[64];
    cr_assert_eq(api->buffer_read(dev, b, 0, want, 64), PARITY_STATUS_OK);
    for (uint64_t i = 0; i < fills[f].size; i += fills[f].ps) memcpy(want + fills[f].off + i, fills[f].p, fills[f].ps);
    cr_assert_eq(api->buffer_fill(dev, b, fills[f].off, fills[f].size, fills[f].p, fills[f].ps), PARITY_STATUS_OK,
                 "fill %zu: %s", f, ct_last_error);
    cr_assert_eq(api->buffer_read(dev, b, 0, out, 64), PARITY_STATUS_OK);
    cr_expect_arr_eq(out, want, 64, "fill %zu (offset %llu, pattern %u bytes)", f, (unsigned long long)fills[f].off,
                     fills[f].ps);
  }
  cr_expect_eq(api->buffer_fill(dev, b, 0, 6, &pat4, 4), PARITY_STATUS_INVALID_ARGUMENT);
  cr_expect_eq(api->buffer_read(dev, b, 60, out, 8), PARITY_STATUS_OUT_OF_RANGE);
  cr_expect_eq(api->buffer_write(dev, z, 0, in, 0), PARITY_STATUS_OK);
  cr_expect_eq(api->synchronize(dev), PARITY_STATUS_OK);
  api->buffer_free(dev, b);
  api->buffer_free(dev, z);
  api->device_close(dev);
  cr_expect_eq(fake_allocations(), 0, "device memory left allocated");
  api->shutdown();
}

/* the memory the fake reports (FAKE_CUDA_TOTAL_MEM_GIB, for --full's cases past 2^31 elements) is
 * the plugin's buffer limit; a value out of 1..64 leaves 1 GiB */
Test(cuda_fakedriver, the_reported_memory_is_the_buffer_limit) {
  setenv("FAKE_CUDA_TOTAL_MEM_GIB", "70", 1);
  const parity_plugin_api_t *api = start("ok");
  cr_assert_eq(api->init(), PARITY_STATUS_OK, "init: %s", ct_last_error);
  parity_device_info_t info = {.struct_size = sizeof info};
  cr_assert_eq(api->get_device_info(0, &info), PARITY_STATUS_OK);
  cr_expect_eq(info.memory_bytes, 1ull << 30);
  api->shutdown();
  setenv("FAKE_CUDA_TOTAL_MEM_GIB", "3", 1);
  cr_assert_eq(api->init(), PARITY_STATUS_OK, "init: %s", ct_last_error);
  cr_assert_eq(api->get_device_info(0, &info), PARITY_STATUS_OK);
  cr_expect_eq(info.memory_bytes, 3ull << 30);
  cr_expect_eq(info.max_buffer_bytes, 3ull << 30);
}

Test(cuda_fakedriver, buffers_round_trip_through_the_stream_ordered_pool) { buffers_round_trip("ok"); }
Test(cuda_fakedriver, buffers_round_trip_without_memory_pools) { buffers_round_trip("nopools"); }

/* add of n f32 elements: a in [0, n), b in [n, 2n), c in [2n, 3n) of one buffer */
static int32_t run_add(const parity_plugin_api_t *api, parity_plugin_device_t *dev, parity_plugin_buffer_t *buf,
                       int64_t n) {
  op_t o;
  op_init(&o, PARITY_OP_ADD, PARITY_DIRECTION_FORWARD, 2, 1);
  for (int k = 0; k < 3; k++) psup_tensor_init(&o.t[k], PARITY_DTYPE_F32, 1, &n, buf, (uint64_t)(k * n * 4));
  return api->elementwise_forward(dev, &o.d);
}

Test(cuda_fakedriver, kernel_entries_launch_with_the_planned_geometry) {
  const parity_plugin_api_t *api = start("ok");
  parity_plugin_device_t *dev = open0(api);
  fake_stats_t *s = stats();
  cr_expect_geq(s->module_loads, 1, "device_open loads the elementwise module");
  cr_expect(s->jit_log_options, "the JIT error and info logs are captured");
  parity_plugin_buffer_t *buf;
  cr_assert_eq(api->buffer_alloc(dev, 3 * 1000 * 4, &buf), PARITY_STATUS_OK);
  cr_assert_eq(run_add(api, dev, buf, 1000), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_expect_str_eq(s->kernel, "ew_binary");
  cr_expect_eq(s->grid[0], 4u);
  cr_expect_eq(s->block[0], 256u);
  /* matmul [8,8] x [8,8]: 16 x 16 tiles */
  op_t o;
  op_init(&o, PARITY_OP_MATMUL, PARITY_DIRECTION_FORWARD, 2, 1);
  int64_t shape[2] = {8, 8};
  for (int k = 0; k < 3; k++) psup_tensor_init(&o.t[k], PARITY_DTYPE_F32, 2, shape, buf, (uint64_t)(k * 256));
  cr_assert_eq(api->supports(dev, &o.d), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_assert_eq(api->matmul_forward(dev, &o.d), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_expect_str_eq(s->kernel, "mm_fwd");
  cr_expect_eq(s->block[0], 16u);
  cr_expect_eq(s->block[1], 16u);
  cr_expect_eq(s->grid[0], 1u);
  /* a sum of 3000 terms into one output is one pass */
  op_init(&o, PARITY_OP_SUM, PARITY_DIRECTION_FORWARD, 1, 1);
  int64_t n = 3000, one = 1;
  psup_tensor_init(&o.t[0], PARITY_DTYPE_F32, 1, &n, buf, 0);
  psup_tensor_init(&o.t[1], PARITY_DTYPE_F32, 1, &one, buf, 0);
  o.d.params.reduce.axes_mask = 1;
  cr_assert_eq(api->reduce_forward(dev, &o.d), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_expect_str_eq(s->kernel, "red_pass");
  /* a misaligned offset is declared unsupported, not run */
  op_init(&o, PARITY_OP_NEG, PARITY_DIRECTION_FORWARD, 1, 1);
  psup_tensor_init(&o.t[0], PARITY_DTYPE_F32, 1, &n, buf, 2);
  psup_tensor_init(&o.t[1], PARITY_DTYPE_F32, 1, &n, buf, 0);
  cr_expect_eq(api->supports(dev, &o.d), PARITY_STATUS_UNSUPPORTED);
  api->buffer_free(dev, buf);
  api->device_close(dev);
  api->shutdown();
}

Test(cuda_fakedriver, a_block_cap_makes_kernels_loop) {
  setenv("PARITY_CUDA_MAX_BLOCKS", "2", 1);
  const parity_plugin_api_t *api = start("ok");
  parity_plugin_device_t *dev = open0(api);
  parity_plugin_buffer_t *buf;
  cr_assert_eq(api->buffer_alloc(dev, 3 * 100000 * 4, &buf), PARITY_STATUS_OK);
  cr_assert_eq(run_add(api, dev, buf, 100000), PARITY_STATUS_OK, "%s", ct_last_error);
  cr_expect_eq(stats()->grid[0], 2u);
  api->buffer_free(dev, buf);
  api->device_close(dev);
}

/* the scratch knob (parity_support/gpu_kit.h) is read at device open: a bad value refuses it */
Test(cuda_fakedriver, a_bad_scratch_mode_refuses_the_device_naming_the_value) {
  setenv("PARITY_CUDA_SCRATCH", "tight", 1);
  const parity_plugin_api_t *api = start("ok");
  cr_assert_eq(api->init(), PARITY_STATUS_OK, "init: %s", ct_last_error);
  parity_plugin_device_t *dev = NULL;
  cr_expect_neq(api->device_open(0, &dev), PARITY_STATUS_OK, "PARITY_CUDA_SCRATCH=tight accepted");
  cr_expect(strstr(ct_last_error, "PARITY_CUDA_SCRATCH='tight' is not one of rounded, exact"), "%s", ct_last_error);
  if (dev) api->device_close(dev);
  unsetenv("PARITY_CUDA_SCRATCH");
  api->shutdown();
}

/* an entry of the fake driver, through its cuGetProcAddress as the plugin finds them */
static void *driver_entry(const char *name) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(lib, "the fake driver is not loaded");
  CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) = (CUresult(*)(
      const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))dlsym(lib, "cuGetProcAddress_v2");
  cr_assert_not_null(gpa);
  void *fn = NULL;
  CUdriverProcAddressQueryResult found;
  cr_assert_eq(gpa(name, &fn, 12000, 0, &found), CUDA_SUCCESS, "%s", name);
  cr_assert_not_null(fn, "%s", name);
  return fn;
}

/* A kernel's .maxntid (__launch_bounds__ in the source) binds its launches, as a driver's does: a
 * bigger block is refused with CUDA_ERROR_INVALID_VALUE; a kernel without one takes up to 1024.
 * Stream-ordered work on a stream the caller did not create (or destroyed) is refused. */
Test(cuda_fakedriver, a_block_past_the_kernels_maxntid_is_refused) {
  const parity_plugin_api_t *api = start("ok");
  parity_plugin_device_t *dev = open0(api);
  CUresult (*load)(CUmodule *, const void *, unsigned, CUjit_option *, void **) =
      (CUresult(*)(CUmodule *, const void *, unsigned, CUjit_option *, void **))driver_entry("cuModuleLoadDataEx");
  CUresult (*get)(CUfunction *, CUmodule, const char *) =
      (CUresult(*)(CUfunction *, CUmodule, const char *))driver_entry("cuModuleGetFunction");
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                     void **, void **) =
      (CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **,
                   void **))driver_entry("cuLaunchKernel");
  const char *ptx =
      "// two entries\n.visible .entry bounded(\n\t.param .u64 p0\n)\n.maxntid 64, 2, 1\n{\n\tret;\n}\n"
      ".visible .entry unbounded(\n\t.param .u64 p0\n)\n{\n\tret;\n}\n";
  CUresult (*stream_create)(CUstream *, unsigned) = (CUresult(*)(CUstream *, unsigned))driver_entry("cuStreamCreate");
  CUresult (*stream_destroy)(CUstream) = (CUresult(*)(CUstream))driver_entry("cuStreamDestroy");
  CUmodule m;
  CUfunction bounded, unbounded;
  CUstream s;
  cr_assert_eq(load(&m, ptx, 0, NULL, NULL), CUDA_SUCCESS);
  cr_assert_eq(get(&bounded, m, "bounded"), CUDA_SUCCESS);
  cr_assert_eq(get(&unbounded, m, "unbounded"), CUDA_SUCCESS);
  cr_assert_eq(stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  uint64_t arg = 0;
  void *params[] = {&arg};
  cr_expect_eq(launch(bounded, 1, 1, 1, 128, 1, 1, 0, s, params, NULL), CUDA_SUCCESS, "64 x 2 x 1 threads fit");
  cr_expect_eq(launch(bounded, 1, 1, 1, 16, 16, 1, 0, s, params, NULL), CUDA_ERROR_INVALID_VALUE, "256 > 128");
  cr_expect_eq(launch(bounded, 4, 1, 1, 129, 1, 1, 0, s, params, NULL), CUDA_ERROR_INVALID_VALUE, "129 > 128");
  cr_expect_eq(launch(unbounded, 1, 1, 1, 1024, 1, 1, 0, s, params, NULL), CUDA_SUCCESS);
  /* the NULL stream, CU_STREAM_PER_THREAD and a destroyed stream are refused: not ordered with the
   * plugin's non-blocking stream on a GPU (fake_libcuda.c: stream_check) */
  cr_expect_eq(launch(unbounded, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_HANDLE);
  cr_expect_eq(launch(unbounded, 1, 1, 1, 32, 1, 1, 0, CU_STREAM_PER_THREAD, params, NULL), CUDA_ERROR_INVALID_HANDLE);
  CUresult (*memset32)(CUdeviceptr, unsigned, size_t, CUstream) =
      (CUresult(*)(CUdeviceptr, unsigned, size_t, CUstream))driver_entry("cuMemsetD32Async");
  uint32_t word = 7;
  cr_expect_eq(memset32((CUdeviceptr)(uintptr_t)&word, 0, 1, NULL), CUDA_ERROR_INVALID_HANDLE);
  cr_expect_eq(word, 7u, "a refused memset wrote");
  cr_assert_eq(stream_destroy(s), CUDA_SUCCESS);
  cr_expect_eq(launch(unbounded, 1, 1, 1, 32, 1, 1, 0, s, params, NULL), CUDA_ERROR_INVALID_HANDLE, "destroyed");
  cr_expect_eq(stream_destroy(s), CUDA_ERROR_INVALID_HANDLE, "destroyed twice");
  api->device_close(dev);
  api->shutdown();
}

Test(cuda_fakedriver, a_sticky_error_poisons_every_later_call, .timeout = 30) {
  const parity_plugin_api_t *api = start("ok");
  parity_plugin_device_t *dev = open0(api);
  parity_plugin_buffer_t *buf;
  cr_assert_eq(api->buffer_alloc(dev, 3 * 64 * 4, &buf), PARITY_STATUS_OK);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void (*set_mode)(const char *) = (void (*)(const char *))dlsym(lib, "fake_cuda_set_mode");
  cr_assert_not_null(set_mode);
  set_mode("illegal");
  cr_assert_eq(run_add(api, dev, buf, 64), PARITY_STATUS_DEVICE_ERROR);
  cr_expect(strstr(ct_last_error, "CUDA_ERROR_ILLEGAL_ADDRESS") != NULL, "%s", ct_last_error);
  cr_expect(strstr(ct_last_error, "sticky") != NULL, "%s", ct_last_error);
  cr_expect(
      strstr(ct_last_error, "cuda: cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (700) (ew_binary);") == ct_last_error,
      "the first report names the call and the kernel: %s", ct_last_error);
  int launches = stats()->launches;
  unsigned char out[16];
  const int32_t dev_err = PARITY_STATUS_DEVICE_ERROR;
  ct_last_error[0] = 0;
  cr_expect_eq(api->synchronize(dev), dev_err);
  cr_expect(strstr(ct_last_error, "sticky device error") != NULL, "%s", ct_last_error);
  cr_expect_eq(api->buffer_read(dev, buf, 0, out, 16), dev_err);
  cr_expect_eq(api->buffer_write(dev, buf, 0, out, 16), dev_err);
  cr_expect_eq(api->buffer_fill(dev, buf, 0, 16, out, 4), dev_err);
  cr_expect_eq(api->buffer_copy(dev, buf, 0, buf, 16, 16), dev_err);
  parity_plugin_buffer_t *b2 = NULL;
  cr_expect_eq(api->buffer_alloc(dev, 16, &b2), dev_err);
  cr_expect_eq(run_add(api, dev, buf, 64), dev_err);
  cr_expect_eq(stats()->launches, launches, "a poisoned context launches nothing");
  api->buffer_free(dev, buf);
  api->device_close(dev); /* returns: nothing waits on a poisoned context */
  parity_plugin_device_t *again = NULL;
  cr_expect_eq(api->device_open(0, &again), dev_err, "the primary context stays poisoned");
  api->shutdown();
}

Test(cuda_fakedriver, an_old_driver_names_both_cuda_versions) {
  const parity_plugin_api_t *api = start("oldptx");
  cr_assert_eq(api->init(), PARITY_STATUS_OK, "init: %s", ct_last_error);
  parity_plugin_device_t *dev = NULL;
  cr_assert_eq(api->device_open(0, &dev), PARITY_STATUS_UNAVAILABLE);
  cr_expect(strstr(ct_last_error, "CUDA 12.2") != NULL, "%s", ct_last_error);
  char want[32];
  snprintf(want, sizeof want, "CUDA %d.%d", CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
  cr_expect(strstr(ct_last_error, want) != NULL, "%s (wants %s)", ct_last_error, want);
  cr_expect(strstr(ct_last_error, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION") != NULL, "%s", ct_last_error);
  cr_expect(strstr(ct_last_error, "222)") != NULL, "%s", ct_last_error);
  api->shutdown();
}

Test(cuda_fakedriver, a_driver_without_devices_is_unavailable) {
  const parity_plugin_api_t *api = start("nodevice");
  cr_assert_eq(api->init(), PARITY_STATUS_UNAVAILABLE);
  cr_expect(strstr(ct_last_error, "CUDA_ERROR_NO_DEVICE") != NULL, "%s", ct_last_error);
}

Test(cuda_fakedriver, a_jit_failure_carries_the_jit_error_log) {
  const parity_plugin_api_t *api = start("badjit");
  cr_assert_eq(api->init(), PARITY_STATUS_OK, "init: %s", ct_last_error);
  parity_plugin_device_t *dev = NULL;
  cr_assert_eq(api->device_open(0, &dev), PARITY_STATUS_INTERNAL);
  cr_expect(strstr(ct_last_error, "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (218)") != NULL, "%s", ct_last_error);
  cr_expect(strstr(ct_last_error, "loading elementwise.f32") != NULL, "%s", ct_last_error);
  cr_expect(strstr(ct_last_error, "JIT error log: ptxas fatal   : fake JIT error in line 42") != NULL, "%s",
            ct_last_error);
  api->shutdown();
}
