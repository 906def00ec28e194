/* ocl_build_log.h — the OpenCL plugin's build log (PARITY_OPENCL_BUILD_LOG) for tests that count
 * compiles: a fresh cache folder with its log, and a count of the log's lines. A line is
 * "<how> <class> <kernel> <declared> <tier>": how source|cache, declared builtins|header (what
 * declared the builtins), tier quick|full (plugins/opencl/README.md). Include after defining
 * _XOPEN_SOURCE 700 (mkdtemp, setenv). */
#ifndef PARITY_TESTS_OCL_BUILD_LOG_H
#define PARITY_TESTS_OCL_BUILD_LOG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

/* A fresh cache folder from the mkdtemp template `dir` (rewritten in place), made the plugin's
 * cache (PARITY_OPENCL_PROGRAM_CACHE=on), with its build log at `log`. */
static inline void ot_logged_cache(char *dir, char *log, size_t n) {
  cr_assert_not_null(mkdtemp(dir));
  snprintf(log, n, "%s/builds.log", dir);
  setenv("PARITY_CACHE_DIR", dir, 1);
  setenv("PARITY_OPENCL_BUILD_LOG", log, 1);
  /* parity's own cache even where the driver keeps one (PoCL: auto leaves it off) */
  setenv("PARITY_OPENCL_PROGRAM_CACHE", "on", 1);
}

/* Lines of the build log whose fields match: how, kernel, declared and tier (NULL: any). 0 when
 * the log does not exist. */
static inline int ot_count_builds(const char *log, const char *how, const char *kernel, const char *declared,
                                  const char *tier) {
  FILE *f = fopen(log, "r");
  if (!f) return 0;
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    char h[32] = "", cls[32] = "", k[64] = "", d[32] = "", t[32] = "";
    if (sscanf(line, "%31s %31s %63s %31s %31s", h, cls, k, d, t) < 3) continue;
    if ((!how || strcmp(h, how) == 0) && (!kernel || strcmp(k, kernel) == 0) &&
        (!declared || strcmp(d, declared) == 0) && (!tier || strcmp(t, tier) == 0))
      n++;
  }
  fclose(f);
  return n;
}

#endif
