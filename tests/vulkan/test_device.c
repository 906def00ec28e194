/* The Vulkan plugin's device, memory, batches and pipeline cache: a plain message without a
 * driver, truthful capabilities (lavapipe is a software GPU that `auto` never prefers), buffers
 * past the staging ring, views at offsets the binding alignment does not allow, more than 65,535
 * work-groups, tensors past maxStorageBufferRange refused with the limit named, and a pipeline
 * cache that is checked before it is trusted and gives bitwise the same results when rebuilt. */
#define _XOPEN_SOURCE 700 /* mkdtemp, setenv, truncate */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vk_test.h"

Test(vk_device, without_a_driver_the_plugin_is_unavailable_with_a_remedy) {
  setenv("VK_ICD_FILENAMES", "/nonexistent/parity-no-icd.json", 1);
  setenv("VK_DRIVER_FILES", "/nonexistent/parity-no-icd.json", 1);
  uint32_t p;
  parity_context_t *ctx = vt_context(&p);
  parity_plugin_record_t r;
  cr_assert_eq(parity_context_plugin(ctx, p, &r), PARITY_STATUS_OK);
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_UNAVAILABLE, "state %d: %s", r.state, r.reason);
  cr_assert(strstr(r.reason, "no Vulkan device found; install mesa-vulkan-drivers or a GPU driver"), "%s", r.reason);
  parity_context_destroy(ctx);
}

/* Every allocation takes a memory type its VkMemoryRequirements allow (memoryTypeBits), not the
 * type chosen once at device open: lavapipe has one type, which every buffer allows, so the knobs
 * PARITY_VULKAN_{BUFFER,RING}_MEMORY_TYPES narrow the bits as a driver could, for the buffers and
 * for the host-visible rings apart (each one's refusal would otherwise hide the other's). With
 * none allowed the device does not open, and says which allocation and why. */
static void refused_with(const char *knob, const char *what) {
  setenv(knob, "0", 1);
  uint32_t p;
  parity_context_t *ctx = vt_context(&p);
  parity_device_t *dev = NULL;
  parity_status_t st = parity_context_open_device(ctx, p, 0, &dev);
  cr_assert_eq(st, PARITY_STATUS_DEVICE_ERROR, "%s=0: status %d: %s", knob, st, parity_last_error());
  char want[200];
  snprintf(want, sizeof want, "%s: none of the memory types its buffer may use (memoryTypeBits 0x0 of", what);
  cr_assert(strstr(parity_last_error(), want), "%s=0: %s", knob, parity_last_error());
  parity_context_destroy(ctx);
  setenv(knob, "1", 1); /* lavapipe's one type: everything as before */
  ctx = vt_context(&p);
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_context_destroy(ctx);
  unsetenv(knob);
}
Test(vk_device, a_buffer_takes_only_a_memory_type_it_allows) {
  refused_with("PARITY_VULKAN_BUFFER_MEMORY_TYPES", "buffer_alloc");
}
Test(vk_device, a_host_ring_takes_only_a_memory_type_it_allows) {
  refused_with("PARITY_VULKAN_RING_MEMORY_TYPES", "a host-visible ring");
}

/* Some drivers allow 4,096 live memory allocations (maxMemoryAllocationCount; lavapipe far more).
 * PARITY_VULKAN_MAX_ALLOCATIONS takes the limit as 64 here. Buffers of up to 256 KiB share 4 MiB
 * blocks (vk_suballoc.c): a thousand of them take 1 allocation, each keeps its own bytes. A buffer
 * past that has an allocation of its own, and past the limit one is refused with OUT_OF_MEMORY
 * naming it (the core then drains its buffer cache and tries again), never made. */
Test(vk_device, small_buffers_share_blocks_and_past_the_allocation_limit_are_refused, .timeout = 120) {
  setenv("PARITY_VULKAN_MAX_ALLOCATIONS", "64", 1);
  parity_device_t *dev = vt_device();
  enum { SMALL = 1000 };
  static parity_buffer_t *small[SMALL];
  static uint8_t bytes[2000], got[2000];
  /* sizes of 16 to 1,976 bytes: slots of 256 to 2,048, each buffer written whole with its own bytes */
#define SMALL_SIZE(i) (16 + 40 * ((i) % 50))
#define SMALL_BYTE(i, k) ((uint8_t)((i)*31 + (k)*7 + 1))
  for (int i = 0; i < SMALL; i++) {
    cr_assert_eq(parity_buffer_alloc(dev, SMALL_SIZE(i), &small[i]), PARITY_STATUS_OK, "buffer %d: %s", i,
                 parity_last_error());
    for (int k = 0; k < SMALL_SIZE(i); k++) bytes[k] = SMALL_BYTE(i, k);
    cr_assert_eq(parity_buffer_write(small[i], 0, bytes, SMALL_SIZE(i)), PARITY_STATUS_OK, "%s", parity_last_error());
  }
  for (int i = 0; i < SMALL; i++) { /* no two slots overlap */
    cr_assert_eq(parity_buffer_read(small[i], 0, got, SMALL_SIZE(i)), PARITY_STATUS_OK, "%s", parity_last_error());
    for (int k = 0; k < SMALL_SIZE(i); k++)
      cr_assert_eq(got[k], SMALL_BYTE(i, k), "buffer %d, byte %d: another buffer's", i, k);
  }
  for (int i = 0; i < SMALL; i += 2) parity_buffer_free(small[i]); /* slots reused */
  for (int i = 0; i < SMALL; i += 2)
    cr_assert_eq(parity_buffer_alloc(dev, 64, &small[i]), PARITY_STATUS_OK, "%s", parity_last_error());
  for (int i = 0; i < SMALL; i++) parity_buffer_free(small[i]);
  parity_buffer_t *bufs[64];
  int n = 0;
  parity_status_t st = PARITY_STATUS_OK;
  while (n < 64 && (st = parity_buffer_alloc(dev, 1 << 20, &bufs[n])) == PARITY_STATUS_OK) n++;
  cr_assert_lt(n, 64, "64 buffers of 1 MiB beside the device's own rings and tables, none refused");
  cr_assert_gt(n, 32, "only %d buffers: %s", n, parity_last_error());
  cr_assert_eq(st, PARITY_STATUS_OUT_OF_MEMORY, "status %d: %s", st, parity_last_error());
  cr_assert(strstr(parity_last_error(), "device memory allocations are live, the most"), "%s", parity_last_error());
  cr_assert(strstr(parity_last_error(), "maxMemoryAllocationCount, PARITY_VULKAN_MAX_ALLOCATIONS"), "%s",
            parity_last_error());
  /* two freed: one more buffer fits, and the staging ring its write may create */
  parity_buffer_free(bufs[--n]);
  parity_buffer_free(bufs[--n]);
  cr_assert_eq(parity_buffer_alloc(dev, 1 << 20, &bufs[n]), PARITY_STATUS_OK, "%s", parity_last_error());
  float in[4] = {1, 2, 3, 4}, out[4] = {0};
  cr_assert_eq(parity_buffer_write(bufs[n], 0, in, sizeof in), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(parity_buffer_read(bufs[n], 0, out, sizeof out), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(memcmp(in, out, sizeof in), 0);
  for (int i = 0; i <= n; i++) parity_buffer_free(bufs[i]);
  unsetenv("PARITY_VULKAN_MAX_ALLOCATIONS");
}

Test(vk_device, capabilities_are_truthful_and_auto_never_prefers_a_software_gpu) {
  parity_device_t *dev = vt_device();
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  if (strstr(info.name, "llvmpipe"))
    cr_assert_eq(info.type, PARITY_DEVICE_TYPE_SOFTWARE_GPU, "lavapipe is a software GPU");
  cr_assert(info.flags & PARITY_DEVICE_FLAG_DETERMINISTIC);
  cr_assert(info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F32));
  cr_assert(info.max_buffer_bytes > 0);
  cr_log_info("%s | %s | dtypes 0x%x | flags 0x%x", info.name, info.driver, info.dtype_mask, info.flags);

  /* 2^-70 * 2^-70 = 2^-140, an f32 subnormal: kept where declared preserved */
  int64_t shape[1] = {1};
  double a = 0x1p-70, got;
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, &a),
            y = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&x, &x}, *out[] = {&y};
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&y, &got);
  if (info.denormals == PARITY_DENORMALS_PRESERVED) cr_assert_eq(got, 0x1p-140);

  /* the largest buffer is refused with the limit named */
  parity_buffer_t *b = NULL;
  cr_assert_eq(parity_buffer_alloc(dev, info.max_buffer_bytes + 1, &b), PARITY_STATUS_OUT_OF_MEMORY);
  cr_assert(strstr(parity_last_error(), "maxMemoryAllocationSize"), "%s", parity_last_error());

  /* auto picks a real GPU or the CPU plugin, never a software GPU */
  if (info.type == PARITY_DEVICE_TYPE_SOFTWARE_GPU) {
    unsetenv("PARITY_BACKEND");
    parity_context_t *ctx = pt_fresh_context();
    parity_device_t *def;
    cr_assert_eq(parity_context_default_device(ctx, &def), PARITY_STATUS_OK, "%s", parity_last_error());
    parity_device_info_t di;
    memset(&di, 0, sizeof di);
    di.struct_size = sizeof di;
    cr_assert_eq(parity_device_get_info(def, &di), PARITY_STATUS_OK);
    cr_assert_neq(di.type, PARITY_DEVICE_TYPE_SOFTWARE_GPU, "auto chose %s", di.name);
    parity_context_destroy(ctx);
  }
}

Test(vk_device, buffers_write_read_copy_fill_past_the_staging_ring) {
  parity_device_t *dev = vt_device();
  size_t n = (40u << 20) + 12; /* 40 MiB + 12: three staging chunks, odd tail */
  unsigned char *src = malloc(n), *dst = malloc(n);
  cr_assert(src && dst);
  for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 131 + (i >> 16));
  parity_buffer_t *a, *b;
  cr_assert_eq(parity_buffer_alloc(dev, n, &a), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(parity_buffer_alloc(dev, 64, &b), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_write(a, 0, src, n), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(parity_buffer_read(a, 0, dst, n), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert(memcmp(src, dst, n) == 0, "large round trip differs");
  /* overlapping copy within one buffer behaves like memmove, both directions */
  unsigned char small[64], got[64];
  for (int i = 0; i < 64; i++) small[i] = (unsigned char)i;
  cr_assert_eq(parity_buffer_write(b, 0, small, 64), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_copy(b, 0, b, 8, 32), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(parity_buffer_read(b, 0, got, 64), PARITY_STATUS_OK);
  for (int i = 0; i < 32; i++) cr_assert_eq(got[8 + i], i, "byte %d", 8 + i);
  cr_assert_eq(parity_buffer_copy(b, 9, b, 1, 32), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(b, 0, got, 64), PARITY_STATUS_OK);
  /* source [9, 41) held 1..31 then byte 40 */
  for (int i = 0; i < 32; i++) cr_assert_eq(got[1 + i], (unsigned char)(i < 31 ? i + 1 : 40), "byte %d", 1 + i);
  /* fills: a word-aligned one (vkCmdFillBuffer) and one at an odd offset (through staging) */
  uint32_t pat = 0xdeadbeef;
  cr_assert_eq(parity_buffer_fill(b, 0, 64, &pat, 4), PARITY_STATUS_OK);
  uint16_t pat2 = 0x1234;
  cr_assert_eq(parity_buffer_fill(b, 3, 8, &pat2, 2), PARITY_STATUS_OK);
  uint64_t pat8 = 0x0102030405060708ull;
  cr_assert_eq(parity_buffer_fill(b, 40, 16, &pat8, 8), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(b, 0, got, 64), PARITY_STATUS_OK);
  cr_assert(got[3] == 0x34 && got[4] == 0x12 && got[9] == 0x34 && got[10] == 0x12 && got[11] == 0xde);
  cr_assert(got[40] == 0x08 && got[47] == 0x01 && got[48] == 0x08 && got[56] == 0xef);
  cr_assert_eq(parity_buffer_read(b, 60, got, 8), PARITY_STATUS_OUT_OF_RANGE);
  cr_assert(strstr(parity_last_error(), "outside"), "%s", parity_last_error());
  parity_buffer_free(a);
  parity_buffer_free(b);
  free(src);
  free(dst);
}

/* c = a + a over n f32 elements, checked element by element */
static void check_add(parity_device_t *dev, int64_t n) {
  int64_t shape[1] = {n};
  double *v = malloc(sizeof(double) * (size_t)n), *got = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = (double)(i % 4099) - 2000.5;
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v),
            c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c};
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&c, got);
  for (int64_t i = 0; i < n; i++)
    if (got[i] != 2.0 * v[i]) cr_assert_fail("element %lld: %g, expected %g", (long long)i, got[i], 2.0 * v[i]);
  pt_tensor_free(&a);
  pt_tensor_free(&c);
  free(v);
  free(got);
}

Test(vk_device, more_than_65535_work_groups_fold_into_y, .timeout = 300) {
  setenv("PARITY_VULKAN_MAX_GROUPS", "1000000", 1);
  parity_device_t *dev = vt_device();
  check_add(dev, 65536LL * 64 + 101); /* 65,538 groups of 64 */
}

Test(vk_device, one_work_group_loops_over_everything) {
  setenv("PARITY_VULKAN_MAX_GROUPS", "1", 1);
  parity_device_t *dev = vt_device();
  check_add(dev, 100003);
}

Test(vk_device, views_at_offsets_the_binding_alignment_does_not_allow) {
  parity_device_t *dev = vt_device();
  /* one buffer, operands at element offsets 1, 3 and 5 of 2-, 8- and 4-byte elements */
  parity_buffer_t *buf;
  cr_assert_eq(parity_buffer_alloc(dev, 4096, &buf), PARITY_STATUS_OK);
  int64_t shape[1] = {37};
  parity_tensor_desc_t x, y, d, e;
  psup_tensor_init(&x, PARITY_DTYPE_F16, 1, shape, parity_buffer_handle(buf), 2);    /* f16 at element 1 */
  psup_tensor_init(&y, PARITY_DTYPE_F64, 1, shape, parity_buffer_handle(buf), 1032); /* f64, 8 mod 16 */
  psup_tensor_init(&d, PARITY_DTYPE_F32, 1, shape, parity_buffer_handle(buf), 2068); /* f32, 4 mod 16 */
  psup_tensor_init(&e, PARITY_DTYPE_F16, 1, shape, parity_buffer_handle(buf), 3006); /* f16, 14 mod 16 */
  (void)e;
  uint16_t h[37];
  for (int i = 0; i < 37; i++) h[i] = psup_f32_to_f16((float)i - 18.5f);
  cr_assert_eq(parity_buffer_write(buf, 2, h, sizeof h), PARITY_STATUS_OK);
  /* cast f16 -> f64 -> f32 through the odd offsets, then compare */
  parity_op_desc_t op;
  memset(&op, 0, sizeof op);
  op.struct_size = sizeof op;
  op.op = PARITY_OP_CAST;
  op.num_inputs = op.num_outputs = 1;
  op.inputs[0] = &x;
  op.outputs[0] = &y;
  cr_assert_eq(parity_device_run(dev, &op), PARITY_STATUS_OK, "%s", parity_last_error());
  op.inputs[0] = &y;
  op.outputs[0] = &d;
  cr_assert_eq(parity_device_run(dev, &op), PARITY_STATUS_OK, "%s", parity_last_error());
  double dd[37];
  float ff[37];
  cr_assert_eq(parity_buffer_read(buf, 1032, dd, sizeof dd), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(buf, 2068, ff, sizeof ff), PARITY_STATUS_OK);
  for (int i = 0; i < 37; i++) {
    cr_assert_eq(dd[i], (double)i - 18.5, "f64 element %d", i);
    cr_assert_eq(ff[i], (float)i - 18.5f, "f32 element %d", i);
  }
  parity_buffer_free(buf);
}

Test(vk_device, a_tensor_past_max_storage_buffer_range_is_refused_with_the_limit_named, .timeout = 120) {
  parity_device_t *dev = vt_device();
  int64_t n = (1LL << 25) + 16, shape[1] = {n}; /* 128 MiB + 64 bytes of f32 */
  parity_tensor_desc_t a;
  psup_tensor_init(&a, PARITY_DTYPE_F32, 1, shape, NULL, 0);
  parity_op_desc_t op;
  memset(&op, 0, sizeof op);
  op.struct_size = sizeof op;
  op.op = PARITY_OP_NEG;
  op.num_inputs = op.num_outputs = 1;
  op.inputs[0] = op.outputs[0] = &a;
  int32_t st = parity_device_supports(dev, &op);
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  if (strstr(info.name, "llvmpipe")) { /* 128 MiB range there */
    cr_assert_eq(st, PARITY_STATUS_UNSUPPORTED);
    cr_assert(strstr(parity_last_error(), "maxStorageBufferRange"), "%s", parity_last_error());
  }
}

/* ---- pipeline cache ----------------------------------------------------------------------------- */
/* exp and gelu of a fixed ramp, as raw f32 bits, on a device opened in a fresh context (so the
 * plugin reads the cache at open and writes it at close) */
static void run_fresh(uint32_t *bits, int n) {
  uint32_t p;
  parity_context_t *ctx = vt_context(&p);
  parity_device_t *dev;
  if (parity_context_open_device(ctx, p, 0, &dev) != PARITY_STATUS_OK) {
    parity_context_destroy(ctx);
    cr_skip_test("no Vulkan device here");
  }
  int64_t shape[1] = {n};
  double *v = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) v[i] = -9.0 + 18.0 * i / n;
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v),
            y = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&x}, *out[] = {&y};
  cr_assert_eq(pt_run(dev, PARITY_OP_GELU, 0, in, 1, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(parity_buffer_read(y.buf, 0, bits, sizeof(uint32_t) * (size_t)n), PARITY_STATUS_OK);
  pt_tensor_free(&x);
  pt_tensor_free(&y);
  free(v);
  parity_context_destroy(ctx);
}

static int cache_file(const char *dir, char *path, size_t n, struct stat *st) {
  char sub[256];
  snprintf(sub, sizeof sub, "%s/vulkan", dir);
  DIR *d = opendir(sub);
  if (!d) return 0;
  struct dirent *e;
  int found = 0;
  while ((e = readdir(d)))
    if (strncmp(e->d_name, "pipelines-", 10) == 0 && !strstr(e->d_name, ".tmp")) {
      snprintf(path, n, "%.255s/%.255s", sub, e->d_name);
      found = stat(path, st) == 0;
    }
  closedir(d);
  return found;
}

Test(vk_device, the_pipeline_cache_is_checked_before_use_and_rebuilt_results_are_identical, .timeout = 300) {
  char dir[] = "/tmp/parity-vk-cache-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("PARITY_CACHE_DIR", dir, 1);
  enum { N = 1000 };
  uint32_t first[N], again[N];
  run_fresh(first, N); /* empty cache: compiles, writes the file at close */
  char path[1024];
  struct stat s0, s1;
  cr_assert(cache_file(dir, path, sizeof path, &s0), "no pipeline cache written under %s/vulkan", dir);

  /* bad files of every kind are ignored (and replaced), and the results stay bitwise the same */
  const char *kinds[] = {"truncated", "garbage", "empty", "foreign"};
  for (int k = 0; k < 4; k++) {
    FILE *f = fopen(path, k == 3 ? "r+b" : "wb");
    cr_assert_not_null(f);
    if (k == 0) fwrite("PARITYVK", 1, 8, f);
    if (k == 1)
      for (int i = 0; i < 4096; i++) fputc(i * 7 + 1, f);
    if (k == 3) { /* a valid parity header but another device in the Vulkan header: checksum catches it */
      fseek(f, 32 + 8, SEEK_SET);
      fputc(0x5a, f);
    }
    fclose(f);
    run_fresh(again, N);
    cr_assert(memcmp(first, again, sizeof first) == 0, "results differ after a %s cache file", kinds[k]);
    cr_assert(cache_file(dir, path, sizeof path, &s1), "the %s cache was not rewritten", kinds[k]);
    /* rewritten whole: parity's 32-byte header, then at least the driver's 32-byte one */
    char magic[8] = {0};
    FILE *g = fopen(path, "rb");
    cr_assert_not_null(g);
    cr_assert_eq(fread(magic, 1, 8, g), 8u);
    fclose(g);
    cr_assert(memcmp(magic, "PARITYVK", 8) == 0 && s1.st_size >= 64,
              "the %s cache was not rewritten whole (%lld bytes)", kinds[k], (long long)s1.st_size);
  }
  /* deleted: rebuilt from scratch, same bits */
  unlink(path);
  run_fresh(again, N);
  cr_assert(memcmp(first, again, sizeof first) == 0, "results differ after the cache was deleted");
  cr_assert(cache_file(dir, path, sizeof path, &s1));
  pt_remove_tree(dir); /* the cache file, and the plugin's key beside it */
}

/* ---- the validation layer is a real check ------------------------------------------------------- */
/* parity-conform on Vulkan under synchronization validation; returns its exit status (-1 when it
 * did not exit normally) and whether the output named a hazard. Under AddressSanitizer the
 * subprocess runs without leak checking: the validation layer leaks and is unloaded before exit,
 * so its leaks show at addresses other libraries (the CPU plugin) occupy by then and its
 * suppression (tools/lsan.supp) cannot match them — the policy tools/ci-extra.sh states. */
static int conform_under_sync_validation(const char *extra_env, int *hazard) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "env PARITY_LOG=quiet PARITY_PLUGIN_PATH= PARITY_VULKAN_VALIDATION=sync "
           "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" %s '%s/parity-conform' "
           "--backend vulkan --op add,exp --dtype f32 --direction forward 2>&1",
           extra_env, PARITY_BIN_DIR);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  char line[4096];
  *hazard = 0;
  while (fgets(line, sizeof line, p))
    if (strstr(line, "SYNC-HAZARD")) *hazard = 1;
  int rc = pclose(p);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

Test(vk_device, synchronization_validation_catches_a_missing_barrier, .timeout = 300) {
  (void)vt_device();
  if (access("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json", R_OK) != 0)
    cr_skip_test("the Khronos validation layer is not installed (vulkan-validationlayers)");
  int hazard;
  int rc = conform_under_sync_validation("", &hazard);
  cr_assert_eq(rc, 0, "the plugin as built must pass under sync validation (status %d)", rc);
  cr_assert(!hazard);
  rc = conform_under_sync_validation("PARITY_VULKAN_UNSAFE_NO_BARRIERS=1", &hazard);
  cr_assert_eq(rc, 1, "without its barriers the plugin must fail (status %d, not a crash)", rc);
  cr_assert(hazard, "the failure names the synchronization hazard");
}

/* ---- write after read inside one batch ------------------------------------------------------------ */
/* y = exp(x), then x = neg(z), recorded into one batch (no synchronize between them): the second
 * dispatch writes a buffer the first one read, and nothing else orders them (x's upload was
 * submitted before, z is only read). The plugin must record a barrier before the second
 * dispatch; on lavapipe the dispatches run one after the other anyway, so only the validation
 * layer's synchronization checks can tell. Returns the status of the synchronize that submits
 * the batch; y and x are read back when it succeeded. */
static parity_status_t write_after_read(double *y_out, double *x_out) {
  parity_device_t *dev = vt_device();
  int64_t shape[1] = {1000};
  double vx[1000], vz[1000];
  for (int i = 0; i < 1000; i++) vx[i] = (i % 17) * 0.25 - 2, vz[i] = i * 0.5 - 7;
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vx),
            z = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vz),
            y = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  cr_assert_eq(parity_device_synchronize(dev), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_op_desc_t op;
  memset(&op, 0, sizeof op);
  op.struct_size = sizeof op;
  op.num_inputs = op.num_outputs = 1;
  op.op = PARITY_OP_EXP;
  op.inputs[0] = &x.desc;
  op.outputs[0] = &y.desc;
  cr_assert_eq(parity_device_run(dev, &op), PARITY_STATUS_OK, "%s", parity_last_error());
  op.op = PARITY_OP_NEG;
  op.inputs[0] = &z.desc;
  op.outputs[0] = &x.desc;
  cr_assert_eq(parity_device_run(dev, &op), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_status_t st = parity_device_synchronize(dev);
  if (st == PARITY_STATUS_OK) {
    pt_tensor_read(&y, y_out);
    pt_tensor_read(&x, x_out);
    for (int i = 0; i < 1000; i++) {
      cr_assert_eq(x_out[i], -vz[i], "x[%d]", i);
      cr_assert(fabs(y_out[i] - exp(vx[i])) <= 1e-6 * exp(vx[i]), "y[%d] = %g, exp(%g) = %g", i, y_out[i], vx[i],
                exp(vx[i]));
    }
  }
  return st;
}

static void need_validation_layer(void) {
  if (access("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json", R_OK) != 0)
    cr_skip_test("the Khronos validation layer is not installed (vulkan-validationlayers)");
}

Test(vk_device, a_write_after_a_read_in_one_batch_gets_a_barrier, .timeout = 120) {
  need_validation_layer();
  setenv("PARITY_VULKAN_VALIDATION", "sync", 1);
  double y[1000], x[1000];
  parity_status_t st = write_after_read(y, x);
  cr_assert_eq(st, PARITY_STATUS_OK, "%s", parity_last_error());
}

/* the same sequence without the plugin's write-after-read barriers (every other barrier kept): the
 * layer names exactly that hazard, so the test above checks that barrier */
Test(vk_device, without_its_barrier_the_write_after_read_is_named_by_synchronization_validation, .timeout = 120) {
  need_validation_layer();
  setenv("PARITY_VULKAN_VALIDATION", "sync", 1);
  setenv("PARITY_VULKAN_UNSAFE_NO_BARRIERS", "war", 1);
  double y[1000], x[1000];
  parity_status_t st = write_after_read(y, x);
  cr_assert_neq(st, PARITY_STATUS_OK, "the missing barrier went unnoticed");
  const char *e = parity_last_error();
  cr_assert(strstr(e, "WRITE-AFTER-READ") || strstr(e, "WRITE_AFTER_READ"), "%s", e);
  cr_assert(!strstr(e, "READ-AFTER-WRITE") && !strstr(e, "READ_AFTER_WRITE"), "%s", e);
}
