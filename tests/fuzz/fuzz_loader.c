/* fuzz_loader — the plugin loader and the context facing a plugin (fuzz_plugin.c) whose every
 * answer is fuzzed: loading, listing, device info, selection, opening and a buffer round trip
 * must never crash, hang or over-read, whatever the plugin says. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity/device.h"

static void (*set_input)(const uint8_t *, size_t);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!set_input) {
    void *h = dlopen(FUZZ_PLUGIN_DIR "/parity-plugin-fuzz.so", RTLD_NOW | RTLD_LOCAL);
    if (!h || !(*(void **)&set_input = dlsym(h, "fuzz_plugin_set_input"))) {
      fprintf(stderr, "fuzz_loader: cannot load the fuzz plugin: %s\n", dlerror());
      abort();
    }
  }
  set_input(data, size);
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.plugin_path = FUZZ_PLUGIN_DIR;
  o.search_default_dirs = 0;
  o.log_level = 0;
  o.backend = size && (data[0] & 1) ? "auto" : "fuzz";
  parity_context_t *ctx = NULL;
  if (parity_context_create(&o, &ctx) != PARITY_STATUS_OK) abort(); /* a bad plugin is never fatal */
  (void)strlen(parity_context_available(ctx));
  for (uint32_t i = 0; i < parity_context_plugin_count(ctx); i++) {
    parity_plugin_record_t r;
    if (parity_context_plugin(ctx, i, &r) != PARITY_STATUS_OK) abort();
    if (strlen(r.name) >= 64 || strlen(r.backend) >= 64 || strlen(r.version) >= 64 || strlen(r.reason) >= 512) abort();
    for (uint32_t d = 0; d < r.device_count && d < 4; d++) {
      parity_device_info_t info = {.struct_size = sizeof info};
      if (parity_context_device_info(ctx, i, d, &info) == PARITY_STATUS_OK &&
          (strlen(info.name) >= sizeof info.name || strlen(info.driver) >= sizeof info.driver ||
           info.struct_size > sizeof info))
        abort();
    }
  }
  parity_device_t *dev = NULL;
  if (parity_context_default_device(ctx, &dev) == PARITY_STATUS_OK) {
    parity_buffer_t *b = NULL;
    unsigned char bytes[16] = {1, 2, 3};
    if (parity_buffer_alloc(dev, sizeof bytes, &b) == PARITY_STATUS_OK) {
      (void)parity_buffer_write(b, 0, bytes, sizeof bytes);
      (void)parity_buffer_read(b, 0, bytes, sizeof bytes);
      parity_buffer_free(b);
    }
  }
  parity_context_destroy(ctx);
  return 0;
}
