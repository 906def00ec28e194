/* check_driver.h — the checking executor's half of the fake driver (fake_libcuda.c built with
 * FAKE_CUDA_EMULATE and FAKE_CUDA_CHECK: tests/fake_cuda_check/libcuda.so.1). Device memory comes
 * from the checker's arena, the device is named after the executor and its seed, and a launch runs
 * under the checker: a report fails it with CUDA_ERROR_UNKNOWN (not sticky: the next case runs on
 * a sound context) and goes to stderr. Included after check/check.h and emu/emu_driver.h. */
#define FAKE_DEVICE_NAME_FMT "cuda-check: checking executor, seed %llu, switch 1/%u"
#define CHECK_MAX_PRINTED 10 /* launches whose reports are printed; the rest are counted */

static unsigned check_failed_launches;

static void check_name(char *s, int n) {
  snprintf(s, (size_t)n, FAKE_DEVICE_NAME_FMT, (unsigned long long)chk_config.seed, chk_config.switch_every);
}

static CUresult check_init(void) {
  char msg[256];
  if (chk_configure(msg, sizeof msg) == 0) return CUDA_SUCCESS;
  fprintf(stderr, "cuda-check: %s\n", msg);
  return CUDA_ERROR_INVALID_VALUE;
}

static CUresult check_launch(const void *kernel, const unsigned *grid, const unsigned *block, void **params) {
  int n = chk_launch(kernel, grid, block, params);
  if (n < 0) {
    fprintf(stderr, "%s\n", chk_failure());
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (n == 0) return CUDA_SUCCESS;
  if (++check_failed_launches <= CHECK_MAX_PRINTED) fprintf(stderr, "%s\n", chk_message());
  return CUDA_ERROR_UNKNOWN;
}

__attribute__((destructor)) static void check_fini(void) {
  if (check_failed_launches > CHECK_MAX_PRINTED)
    fprintf(stderr, "cuda-check: %u launches failed in all; the reports of the first %u are above\n",
            check_failed_launches, CHECK_MAX_PRINTED);
  chk_stats_write();
}
