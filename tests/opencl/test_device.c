/* The OpenCL plugin's device, queue and error reporting: truthful capabilities, every OpenCL
 * error code named and mapped, a clear message without any platform, buffers, sizes past the
 * work-group and grid limits, zero-element tensors and run-to-run determinism. The programs and
 * their cache: test_program_cache.c. */
#define _XOPEN_SOURCE 700 /* mkdtemp, setenv */
#include <unistd.h>

#include "ocl_test.h"

/* The plugin's error table, compiled into this test (it calls no OpenCL function); needs the
 * OpenCL headers, which machines without the plugin may lack. */
#if defined(__has_include)
#if __has_include(<CL/cl.h>)
#define OT_HAVE_CL_HEADERS 1
#include "../../plugins/opencl/cl_errors.c"
#endif
#endif

Test(ocl_device, every_opencl_error_code_has_its_name_and_a_status) {
#ifndef OT_HAVE_CL_HEADERS
  cr_skip_test("no OpenCL headers here");
#else
  for (cl_int e = -1; e >= -72; e--) {
    if (e < -19 && e > -30) continue; /* unassigned */
    cr_assert_not_null(ocl_error_name(e), "code %d has no name", e);
    cr_assert_neq(ocl_error_status(e), PARITY_STATUS_OK, "code %d maps to OK", e);
  }
  cr_assert_str_eq(ocl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  cr_assert_eq(ocl_error_status(CL_OUT_OF_RESOURCES), PARITY_STATUS_DEVICE_ERROR);
  cr_assert_eq(ocl_error_status(CL_MEM_OBJECT_ALLOCATION_FAILURE), PARITY_STATUS_OUT_OF_MEMORY);
  cr_assert_eq(ocl_error_status(CL_OUT_OF_HOST_MEMORY), PARITY_STATUS_OUT_OF_MEMORY);
  cr_assert_eq(ocl_error_status(CL_INVALID_BUILD_OPTIONS), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_str_eq(ocl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  cr_assert_eq(ocl_error_status(-1001), PARITY_STATUS_UNAVAILABLE);
  cr_assert_eq(ocl_error_status(CL_DEVICE_NOT_FOUND), PARITY_STATUS_UNAVAILABLE);
  cr_assert_null(ocl_error_name(-9999));
  cr_assert_eq(ocl_error_status(-9999), PARITY_STATUS_DEVICE_ERROR);
  cr_assert_eq(ocl_error_status(CL_SUCCESS), PARITY_STATUS_OK);
#endif
}

Test(ocl_device, without_any_platform_the_plugin_is_unavailable_with_a_remedy) {
  char dir[] = "/tmp/parity-no-icd-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("OCL_ICD_VENDORS", dir, 1);    /* ocl-icd */
  setenv("OPENCL_VENDOR_PATH", dir, 1); /* Khronos loader */
  setenv("OCL_ICD_FILENAMES", "", 1);
  parity_context_t *ctx = pt_fresh_context();
  int seen = 0;
  for (uint32_t i = 0; i < parity_context_plugin_count(ctx); i++) {
    parity_plugin_record_t r;
    cr_assert_eq(parity_context_plugin(ctx, i, &r), PARITY_STATUS_OK);
    if (strcmp(r.name, "opencl") != 0) continue;
    seen = 1;
    cr_assert_eq(r.state, PARITY_PLUGIN_STATE_UNAVAILABLE, "state %d: %s", r.state, r.reason);
    cr_assert(strstr(r.reason, "no OpenCL platform found; install an ICD such as pocl-opencl-icd"), "%s", r.reason);
    cr_assert(!strstr(r.reason, "-1001"), "%s", r.reason);
  }
  parity_context_destroy(ctx);
  pt_remove_tree(dir);
  if (!seen) cr_skip_test("the OpenCL plugin is not built");
}

Test(ocl_device, capabilities_are_truthful) {
  parity_device_t *dev = ot_device();
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  cr_assert(strchr(info.name, '('), "the name carries the platform: %s", info.name);
  cr_assert(info.type == PARITY_DEVICE_TYPE_GPU || info.type == PARITY_DEVICE_TYPE_SOFTWARE_GPU ||
            info.type == PARITY_DEVICE_TYPE_OTHER);
  if (strstr(info.name, "Portable Computing Language") && strstr(info.name, "pthread"))
    cr_assert_eq(info.type, PARITY_DEVICE_TYPE_SOFTWARE_GPU, "PoCL's CPU device is a software GPU");
  cr_assert(info.flags & PARITY_DEVICE_FLAG_DETERMINISTIC);
  int f64 = (info.flags & PARITY_DEVICE_FLAG_FLOAT64) != 0;
  cr_assert_eq(f64, (info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F64)) != 0);
  cr_assert(info.max_buffer_bytes > 0 && info.max_buffer_bytes <= info.memory_bytes);
  cr_log_info("%s | %s | f64 %s | denormals %s", info.name, info.driver, f64 ? "yes" : "no",
              info.denormals == PARITY_DENORMALS_PRESERVED ? "preserved" : "flushed");

  /* denormals: 2^-70 * 2^-70 = 2^-140 is an f32 subnormal */
  int64_t shape[1] = {1};
  double a = 0x1p-70;
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, &a),
            y = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&x, &x}, *out[] = {&y};
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  double got;
  pt_tensor_read(&y, &got);
  if (info.denormals == PARITY_DENORMALS_PRESERVED)
    cr_assert_eq(got, 0x1p-140);
  else
    cr_assert_eq(got, 0.0);

  /* f64 runs iff declared */
  parity_tensor_desc_t t;
  psup_tensor_init(&t, PARITY_DTYPE_F64, 1, shape, NULL, 0);
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = PARITY_OP_EXP;
  d.num_inputs = d.num_outputs = 1;
  d.inputs[0] = d.outputs[0] = &t;
  cr_assert_eq(parity_device_supports(dev, &d) == PARITY_STATUS_OK, f64, "%s", parity_last_error());

  /* the largest buffer is refused with the limit named */
  parity_buffer_t *b = NULL;
  cr_assert_eq(parity_buffer_alloc(dev, info.max_buffer_bytes + 1, &b), PARITY_STATUS_OUT_OF_MEMORY);
  cr_assert(strstr(parity_last_error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE"), "%s", parity_last_error());
}

Test(ocl_device, supports_names_what_is_wrong) {
  parity_device_t *dev = ot_device();
  int64_t s3[1] = {3}, s4[1] = {4};
  parity_tensor_desc_t a, b, c;
  psup_tensor_init(&a, PARITY_DTYPE_F32, 1, s3, NULL, 0);
  psup_tensor_init(&b, PARITY_DTYPE_F32, 1, s4, NULL, 0);
  psup_tensor_init(&c, PARITY_DTYPE_F32, 1, s3, NULL, 0);
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = PARITY_OP_ADD;
  d.num_inputs = 2, d.num_outputs = 1;
  d.inputs[0] = &a, d.inputs[1] = &b, d.outputs[0] = &c;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "[4]") && strstr(parity_last_error(), "[3]"), "%s", parity_last_error());
  b = a;
  b.dtype = PARITY_DTYPE_F16;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "f16"), "%s", parity_last_error());
  a.dtype = b.dtype = c.dtype = PARITY_DTYPE_I32;
  d.op = PARITY_OP_DIV;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "div") && strstr(parity_last_error(), "i32"), "%s", parity_last_error());
  d.op = PARITY_OP_ADD;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_OK, "%s", parity_last_error());
  a.offset_bytes = 2;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "offset"), "%s", parity_last_error());
}

Test(ocl_device, a_build_failure_names_the_opencl_call_and_error) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  setenv("PARITY_OPENCL_BUILD_OPTIONS", "-cl-no-such-option", 1);
  uint32_t p;
  parity_context_t *ctx = ot_fresh_context(&p);
  parity_device_t *dev = NULL;
  /* opening compiles nothing, so it succeeds; the first op builds its kernel and fails */
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t shape[1] = {3};
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL),
            c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c};
  cr_assert_neq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK);
  cr_assert(strstr(parity_last_error(), "clBuildProgram: CL_"), "%s", parity_last_error());
  cr_assert(strstr(parity_last_error(), "ew_binary"), "names the kernel: %s", parity_last_error());
  /* and again: still a clear failure, not a crash */
  cr_assert_neq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK);
  pt_tensor_free(&a);
  pt_tensor_free(&c);
  parity_context_destroy(ctx);
}

/* ---- buffers and the queue ---------------------------------------------------------------------- */
Test(ocl_device, buffers_write_read_copy_fill_including_overlap_and_odd_offsets) {
  parity_device_t *dev = ot_device();
  parity_buffer_t *a, *b, *z;
  unsigned char src[64], dst[64];
  for (int i = 0; i < 64; i++) src[i] = (unsigned char)i;
  cr_assert_eq(parity_buffer_alloc(dev, 64, &a), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_alloc(dev, 64, &b), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_alloc(dev, 0, &z), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_write(a, 0, src, 64), PARITY_STATUS_OK);
  memset(src, 0xee, sizeof src); /* write copied the host memory before returning */
  cr_assert_eq(parity_buffer_read(a, 0, dst, 64), PARITY_STATUS_OK);
  for (int i = 0; i < 64; i++) cr_assert_eq(dst[i], i);
  /* overlapping copy within one buffer behaves like memmove */
  cr_assert_eq(parity_buffer_copy(a, 0, a, 8, 32), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(a, 0, dst, 64), PARITY_STATUS_OK);
  for (int i = 0; i < 32; i++) cr_assert_eq(dst[8 + i], i);
  /* fill at an offset that is not a multiple of the pattern */
  uint32_t pat = 0xdeadbeef;
  cr_assert_eq(parity_buffer_fill(b, 0, 64, &pat, 4), PARITY_STATUS_OK);
  uint16_t pat2 = 0x1234;
  cr_assert_eq(parity_buffer_fill(b, 3, 8, &pat2, 2), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(b, 0, dst, 64), PARITY_STATUS_OK);
  cr_assert(dst[3] == 0x34 && dst[4] == 0x12 && dst[9] == 0x34 && dst[10] == 0x12 && dst[11] == 0xde);
  cr_assert_eq(parity_buffer_read(z, 0, dst, 0), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(a, 60, dst, 8), PARITY_STATUS_OUT_OF_RANGE);
  parity_buffer_free(a);
  parity_buffer_free(b);
  parity_buffer_free(z);
}

/* Writes queue without waiting for earlier work, from a copy: the caller's memory may be freed
 * or overwritten as soon as write returns (AddressSanitizer sees a write that still reads it),
 * and the queue keeps the order of writes, copies and kernels. */
Test(ocl_device, writes_copy_the_callers_memory_and_keep_queue_order) {
  parity_device_t *dev = ot_device();
  enum { N = 4096, ROUNDS = 64 };
  parity_buffer_t *a, *b;
  cr_assert_eq(parity_buffer_alloc(dev, N * 4, &a), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_alloc(dev, N * 4, &b), PARITY_STATUS_OK);
  for (int r = 0; r < ROUNDS; r++) {
    uint32_t *src = malloc(N * 4);
    cr_assert_not_null(src);
    for (int i = 0; i < N; i++) src[i] = (uint32_t)(r * N + i);
    cr_assert_eq(parity_buffer_write(a, 0, src, N * 4), PARITY_STATUS_OK);
    memset(src, 0xee, N * 4);
    free(src);
    /* b[r] = a[r]: each copy sees the write just before it */
    cr_assert_eq(parity_buffer_copy(a, (uint64_t)r * 4, b, (uint64_t)r * 4, 4), PARITY_STATUS_OK);
  }
  uint32_t got[N];
  cr_assert_eq(parity_buffer_read(b, 0, got, ROUNDS * 4), PARITY_STATUS_OK);
  for (int r = 0; r < ROUNDS; r++) cr_assert_eq(got[r], (uint32_t)(r * N + r), "round %d", r);
  cr_assert_eq(parity_buffer_read(a, 0, got, N * 4), PARITY_STATUS_OK);
  for (int i = 0; i < N; i++) cr_assert_eq(got[i], (uint32_t)((ROUNDS - 1) * N + i));
  /* a write larger than the staging limit blocks instead, with the same result */
  size_t big = (size_t)20 << 20;
  parity_buffer_t *c;
  cr_assert_eq(parity_buffer_alloc(dev, big, &c), PARITY_STATUS_OK);
  unsigned char *host = malloc(big), *back = malloc(big);
  cr_assert(host && back);
  for (size_t i = 0; i < big; i++) host[i] = (unsigned char)(i * 31 + 7);
  cr_assert_eq(parity_buffer_write(c, 0, host, big), PARITY_STATUS_OK);
  memset(host, 0, big);
  cr_assert_eq(parity_buffer_read(c, 0, back, big), PARITY_STATUS_OK);
  for (size_t i = 0; i < big; i++) cr_assert_eq(back[i], (unsigned char)(i * 31 + 7), "byte %zu", i);
  free(host);
  free(back);
  parity_buffer_free(a);
  parity_buffer_free(b);
  parity_buffer_free(c);
}

static void check_big_add_and_sum(parity_device_t *dev, int64_t n) {
  int64_t shape[1] = {n}, one[1] = {1};
  double *v = malloc(sizeof(double) * (size_t)n), *got = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = (double)(i % 1000);
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v),
            c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  pt_tensor s = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, one, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c}, *rin[] = {&a}, *rout[] = {&s};
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&c, got);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(got[i], 2.0 * (double)(i % 1000), "element %lld", (long long)i);
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = 1;
  cr_assert_eq(pt_run(dev, PARITY_OP_SUM, 0, rin, 1, rout, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
  double sum, want = 0;
  for (int64_t i = 0; i < n; i++) want += v[i];
  pt_tensor_read(&s, &sum);
  cr_assert(fabs(sum - want) <= psup_accum_bound(PARITY_DTYPE_F32, want, want, n), "%.17g vs %.17g", sum, want);
  pt_tensor_free(&a);
  pt_tensor_free(&c);
  pt_tensor_free(&s);
  free(v);
  free(got);
}

Test(ocl_device, sizes_past_the_work_group_limit) {
  parity_device_t *dev = ot_device();
  check_big_add_and_sum(dev, (1 << 20) + 37); /* far more than the 4096 work-items of a group */
}

Test(ocl_device, tiny_grids_and_the_strided_layout_loop_over_everything) {
  setenv("PARITY_OPENCL_MAX_GROUPS", "1", 1);
  setenv("PARITY_OPENCL_WORK_LAYOUT", "strided", 1);
  parity_device_t *dev = ot_device(), *cpu = pt_device("cpu");
  check_big_add_and_sum(dev, 300001);
  int64_t shape[3] = {5, 7, 9001}, ys[3] = {5, 1, 9001};
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = "max over axis 1, strided layout";
  c.op = PARITY_OP_MAX;
  c.params.reduce.axes_mask = 2;
  c.nin = c.nout = 1;
  c.in[0] = ot_contig(PARITY_DTYPE_F16, 3, shape), c.out[0] = ot_contig(PARITY_DTYPE_F16, 3, ys);
  c.lo = -5, c.hi = 5;
  ot_check(dev, cpu, &c);
}

/* PARITY_OPENCL_GRAIN=1 (the checking executor's CPU-layout run spreads elementwise ops over
 * work-items from 2 elements on, each a contiguous run): the results are the same. (That the
 * runs are spread is opencl_check_conform_cpu_grain's check.) */
Test(ocl_device, a_grain_of_one_keeps_adds_and_sums_right) {
  setenv("PARITY_OPENCL_GRAIN", "1", 1);
  setenv("PARITY_OPENCL_WORK_LAYOUT", "contiguous", 1);
  check_big_add_and_sum(ot_device(), 9001);
}

/* every knob refuses a bad value at device open with the value quoted (MAX_GROUPS, WORK_LAYOUT and
 * NO_FP64 used to take garbage silently as the default) */
Test(ocl_device, every_knob_refuses_a_bad_value_as_written) {
  static const char *const cases[][3] = {
      {"PARITY_OPENCL_MAX_GROUPS", "lots", "PARITY_OPENCL_MAX_GROUPS='lots' is not a whole number"},
      {"PARITY_OPENCL_GRAIN", "0", "PARITY_OPENCL_GRAIN='0' is out of range"},
      {"PARITY_OPENCL_WORK_LAYOUT", "diagonal",
       "PARITY_OPENCL_WORK_LAYOUT='diagonal' is not one of auto, contiguous, strided"},
      {"PARITY_OPENCL_EXACT_DIV", "exact", "PARITY_OPENCL_EXACT_DIV='exact' is not one of auto, lib, builtin"},
      {"PARITY_OPENCL_NO_FP64", "maybe", "PARITY_OPENCL_NO_FP64='maybe' is not one of 0, 1"},
      {"PARITY_OPENCL_TIER", "fast", "PARITY_OPENCL_TIER='fast' is not one of auto, tiered, full, quick"},
      {"PARITY_OPENCL_SCRATCH", "tight", "PARITY_OPENCL_SCRATCH='tight' is not one of rounded, exact"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setenv(cases[i][0], cases[i][1], 1);
    parity_context_t *ctx = pt_fresh_context();
    uint32_t p;
    cr_assert_eq(parity_context_find_plugin(ctx, "opencl", &p), PARITY_STATUS_OK, "%s", parity_last_error());
    parity_device_t *dev = NULL;
    cr_assert_neq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s=%s accepted", cases[i][0],
                  cases[i][1]);
    cr_assert(strstr(parity_last_error(), cases[i][2]), "%s", parity_last_error());
    parity_context_destroy(ctx);
    unsetenv(cases[i][0]);
  }
}

Test(ocl_device, zero_element_tensors_launch_nothing_and_write_nothing) {
  parity_device_t *dev = ot_device();
  int64_t zs[2] = {0, 5}, ones[2] = {1, 5};
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, zs, NULL),
            c = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, zs, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c};
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.softmax.axis = 1;
  const pt_tensor *in1[] = {&a};
  cr_assert_eq(pt_run(dev, PARITY_OP_SOFTMAX, 0, in1, 1, out, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
  /* sum over the empty axis 0 writes zeros into a real output */
  double sentinel[5] = {9, 9, 9, 9, 9}, got[5];
  pt_tensor y = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, ones, sentinel);
  p.reduce.axes_mask = 1;
  const pt_tensor *out1[] = {&y};
  cr_assert_eq(pt_run(dev, PARITY_OP_SUM, 0, in1, 1, out1, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&y, got);
  for (int i = 0; i < 5; i++) cr_assert_eq(got[i], 0.0);
  /* matmul with k = 0 gives zeros */
  int64_t as[2] = {2, 0}, bs[2] = {0, 3}, cs[2] = {2, 3};
  double cinit[6] = {7, 7, 7, 7, 7, 7}, cg[6];
  pt_tensor ma = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, as, NULL),
            mb = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, bs, NULL);
  pt_tensor mc = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, cs, cinit);
  const pt_tensor *min[] = {&ma, &mb}, *mout[] = {&mc};
  cr_assert_eq(pt_run(dev, PARITY_OP_MATMUL, 0, min, 2, mout, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&mc, cg);
  for (int i = 0; i < 6; i++) cr_assert_eq(cg[i], 0.0);
}

Test(ocl_device, large_reductions_are_bitwise_reproducible) {
  parity_device_t *dev = ot_device();
  int64_t n = 1 << 22, shape[1] = {n}, one[1] = {1};
  double *v = malloc(sizeof(double) * (size_t)n);
  uint64_t seed = 42;
  for (int64_t i = 0; i < n; i++) v[i] = ot_rand(&seed) * 2 - 1;
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v),
            y = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, one, NULL);
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = 1;
  const pt_tensor *in[] = {&x}, *out[] = {&y};
  uint32_t first = 0, again = 0;
  for (int r = 0; r < 3; r++) {
    cr_assert_eq(pt_run(dev, PARITY_OP_SUM, 0, in, 1, out, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(parity_buffer_read(y.buf, 0, r ? &again : &first, 4), PARITY_STATUS_OK);
    if (r) cr_assert_eq(again, first, "run %d: 0x%08x vs 0x%08x", r, again, first);
  }
  free(v);
}

Test(ocl_device, without_fp64_f64_is_refused_and_leaky_relu_still_rounds_once) {
  setenv("PARITY_OPENCL_NO_FP64", "1", 1);
  parity_device_t *dev = ot_device(), *cpu = pt_device("cpu");
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  cr_assert_eq(info.flags & PARITY_DEVICE_FLAG_FLOAT64, 0u);
  cr_assert_eq(info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F64), 0u);
  int64_t shape[1] = {1000};
  parity_tensor_desc_t t;
  psup_tensor_init(&t, PARITY_DTYPE_F64, 1, shape, NULL, 0);
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = PARITY_OP_ADD;
  d.num_inputs = 2, d.num_outputs = 1;
  d.inputs[0] = d.inputs[1] = d.outputs[0] = &t;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "cl_khr_fp64"), "%s", parity_last_error());
  /* the f64 slope travels as three floats; the product still rounds once */
  for (int k = 0; k < 3; k++) {
    static const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
    ot_case c;
    memset(&c, 0, sizeof c);
    c.name = "leaky_relu without fp64";
    c.op = PARITY_OP_LEAKY_RELU;
    c.params.unary.alpha = 0.0123456789012345;
    c.nin = c.nout = 1;
    c.in[0] = c.out[0] = ot_contig(dts[k], 1, shape);
    c.lo = -1e3, c.hi = 10;
    static const double sp[] = {-INFINITY, INFINITY, NAN, -0.0, -3e38, -1e-40};
    c.specials = sp;
    c.nspecials = 6;
    ot_check(dev, cpu, &c);
  }
}

/* The fp64-less profile (PARITY_OPENCL_NO_FP64=1, as CI's conform_opencl_no_fp64): f64 is gone
 * from the device, a cast to or from f64 is refused naming cl_khr_fp64, and the float paths the
 * double ones serve elsewhere still run within the conformance rule: exp, gelu (forward and
 * backward), pow, sum, mean, softmax, avg_pool2d, and casts
 * from i64 to f32, f16 and bf16 next to ties (rounded once, through round to odd). */
static void no_fp64_refuses(parity_device_t *dev, int32_t op, int32_t in_dt, int32_t out_dt) {
  int64_t shape[1] = {8};
  parity_tensor_desc_t a, c;
  psup_tensor_init(&a, in_dt, 1, shape, NULL, 0);
  psup_tensor_init(&c, out_dt, 1, shape, NULL, 0);
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = op;
  d.num_inputs = 1, d.num_outputs = 1;
  d.inputs[0] = &a, d.outputs[0] = &c;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED, "%s %s -> %s runs without fp64",
               psup_op_name(op), psup_dtype_name(in_dt), psup_dtype_name(out_dt));
  cr_assert(strstr(parity_last_error(), "cl_khr_fp64"), "%s", parity_last_error());
}

Test(ocl_device, without_fp64_the_float_paths_still_run_within_the_rule) {
  setenv("PARITY_OPENCL_NO_FP64", "1", 1);
  parity_device_t *dev = ot_device(), *cpu = pt_device("cpu");
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  cr_assert_eq(info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F64), 0u, "mask 0x%x", info.dtype_mask);
  cr_assert_eq(info.flags & PARITY_DEVICE_FLAG_FLOAT64, 0u);
  no_fp64_refuses(dev, PARITY_OP_EXP, PARITY_DTYPE_F64, PARITY_DTYPE_F64);
  no_fp64_refuses(dev, PARITY_OP_CAST, PARITY_DTYPE_F32, PARITY_DTYPE_F64);
  no_fp64_refuses(dev, PARITY_OP_CAST, PARITY_DTYPE_F64, PARITY_DTYPE_F32);
  no_fp64_refuses(dev, PARITY_OP_CAST, PARITY_DTYPE_I64, PARITY_DTYPE_F64);
  static const int32_t fdt[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  static const double sp[] = {-INFINITY, INFINITY, NAN, -0.0, 0.0, 1e-40};
  int64_t n[1] = {300}, rows[2] = {7, 45}, one[2] = {7, 1}, img[4] = {2, 3, 9, 9}, pooled[4] = {2, 3, 4, 4};
  for (int k = 0; k < 3; k++) {
    ot_case c;
    /* exp, gelu forward; gelu backward */
    static const int32_t unary[] = {PARITY_OP_EXP, PARITY_OP_GELU};
    for (int u = 0; u < 2; u++)
      for (int dir = 0; dir < 2; dir++) {
        if (unary[u] == PARITY_OP_EXP && dir) continue;
        memset(&c, 0, sizeof c);
        c.name = psup_op_name(unary[u]);
        c.op = unary[u];
        c.direction = dir ? PARITY_DIRECTION_BACKWARD : PARITY_DIRECTION_FORWARD;
        c.nin = dir ? 3 : 1, c.nout = 1;
        c.in[0] = c.in[1] = c.in[2] = c.out[0] = ot_contig(fdt[k], 1, n);
        c.lo = -12, c.hi = 12;
        c.specials = sp, c.nspecials = dir ? 0 : 6;
        ot_check(dev, cpu, &c);
      }
    /* pow (a > 0) */
    memset(&c, 0, sizeof c);
    c.name = "pow";
    c.op = PARITY_OP_POW;
    c.nin = 2, c.nout = 1;
    c.in[0] = c.in[1] = c.out[0] = ot_contig(fdt[k], 1, n);
    c.lo = 0.125, c.hi = 4;
    ot_check(dev, cpu, &c);
    /* sum and mean over rows of 45 */
    for (int32_t op = PARITY_OP_SUM; op <= PARITY_OP_MEAN; op++) {
      memset(&c, 0, sizeof c);
      c.name = psup_op_name(op);
      c.op = op;
      c.params.reduce.axes_mask = 2;
      c.nin = 1, c.nout = 1;
      c.in[0] = ot_contig(fdt[k], 2, rows);
      c.out[0] = ot_contig(fdt[k], 2, one);
      c.lo = -3, c.hi = 3;
      c.k = 45;
      ot_check(dev, cpu, &c);
    }
    /* softmax forward */
    memset(&c, 0, sizeof c);
    c.name = "softmax";
    c.op = PARITY_OP_SOFTMAX;
    c.params.softmax.axis = 1;
    c.nin = 1, c.nout = 1;
    c.in[0] = c.out[0] = ot_contig(fdt[k], 2, rows);
    c.lo = -8, c.hi = 8;
    c.k = 45;
    ot_check(dev, cpu, &c);
    /* avg_pool2d 3x3 stride 2 */
    memset(&c, 0, sizeof c);
    c.name = "avg_pool2d";
    c.op = PARITY_OP_AVG_POOL2D;
    c.params.conv2d.kernel[0] = c.params.conv2d.kernel[1] = 3;
    c.params.conv2d.stride[0] = c.params.conv2d.stride[1] = 2;
    c.params.conv2d.dilation[0] = c.params.conv2d.dilation[1] = 1;
    c.nin = 1, c.nout = 1;
    c.in[0] = ot_contig(fdt[k], 4, img);
    c.out[0] = ot_contig(fdt[k], 4, pooled);
    c.lo = -2, c.hi = 2;
    c.k = 9;
    ot_check(dev, cpu, &c);
    /* i64 -> f32/f16/bf16: exact, ties and one past them, where rounding twice (through f32)
     * would land on the wrong side: 2^24 + 2^16 + 1 is a tie in f32 and one past a tie in bf16 */
    static const double iv[] = {0,
                                1,
                                -1,
                                2049,
                                2051,
                                -2049,
                                65519,
                                65520,
                                16842753,
                                -16842753,
                                16842752,
                                4294967297.0,
                                1099511627777.0,
                                9007199254740991.0,
                                -9007199254740991.0,
                                12345};
    int64_t ni[1] = {16};
    memset(&c, 0, sizeof c);
    c.name = "cast from i64";
    c.op = PARITY_OP_CAST;
    c.nin = 1, c.nout = 1;
    c.in[0] = ot_contig(PARITY_DTYPE_I64, 1, ni);
    c.out[0] = ot_contig(fdt[k], 1, ni);
    c.values[0] = iv;
    c.oracle_same_dtype = 1;
    ot_check(dev, cpu, &c);
  }
}
