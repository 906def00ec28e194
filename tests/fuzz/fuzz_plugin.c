/* fuzz_plugin — a plugin whose every answer comes from the fuzzer's input (see fuzz_loader.c):
 * statuses, ABI versions, table size, names, device count, device info bytes, handles and error
 * texts. Strings it hands over as const char * are NUL-terminated (the ABI says so); fixed-size
 * arrays in device info are not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parity_plugin.h"

static const uint8_t *in;
static size_t in_size, in_pos;
static const parity_host_api_t *host;
static char strs[4][80];

PARITY_PLUGIN_EXPORT void fuzz_plugin_set_input(const uint8_t *data, size_t size) {
  in = data;
  in_size = size;
  in_pos = 0;
}

static uint32_t u32(void) {
  uint32_t v = 0;
  for (int i = 0; i < 4 && in_pos < in_size; i++) v |= (uint32_t)in[in_pos++] << (8 * i);
  return v;
}
static int32_t status(void) { /* mostly OK */
  uint32_t v = u32();
  return (v & 3) ? PARITY_STATUS_OK : (int32_t)(v >> 2) % 16;
}
static const char *str(int k) {
  uint32_t n = u32() % sizeof strs[k];
  size_t i = 0;
  for (; i < n && in_pos < in_size; i++) strs[k][i] = (char)in[in_pos++];
  strs[k][i] = 0;
  return strs[k];
}
static int32_t maybe_report(int32_t st) {
  if (st != PARITY_STATUS_OK && host && (u32() & 1)) host->report_error(host->host_data, st, str(3));
  return st;
}

static int32_t f_init(void) { return maybe_report(status()); }
static void f_shutdown(void) {}
static int32_t f_count(uint32_t *n) {
  int32_t st = status();
  *n = u32();
  return maybe_report(st);
}
static int32_t f_info(uint32_t index, parity_device_info_t *out) {
  (void)index;
  int32_t st = status();
  uint32_t room = out->struct_size < sizeof *out ? out->struct_size : (uint32_t)sizeof *out;
  unsigned char raw[sizeof *out];
  for (size_t i = 0; i < sizeof raw; i++) raw[i] = in_pos < in_size ? in[in_pos++] : (unsigned char)i;
  memcpy(out, raw, room); /* within the host's size, as the ABI requires; contents arbitrary */
  return maybe_report(st);
}
struct parity_plugin_device_t {
  int unused;
};
static struct parity_plugin_device_t dev0;
static int32_t f_open(uint32_t index, parity_plugin_device_t **out) {
  (void)index;
  int32_t st = status();
  *out = (u32() & 7) ? &dev0 : NULL;
  return maybe_report(st);
}
static void f_close(parity_plugin_device_t *d) { (void)d; }
struct parity_plugin_buffer_t {
  unsigned char *data;
};
static int32_t f_alloc(parity_plugin_device_t *d, uint64_t size, parity_plugin_buffer_t **out) {
  (void)d;
  int32_t st = status();
  if (st != PARITY_STATUS_OK) return maybe_report(st);
  parity_plugin_buffer_t *b = calloc(1, sizeof *b);
  if (b) b->data = calloc(1, size ? size : 1);
  if (!b || !b->data) {
    free(b);
    return PARITY_STATUS_OUT_OF_MEMORY;
  }
  *out = (u32() & 7) ? b : NULL;
  if (!*out) free(b->data), free(b);
  return PARITY_STATUS_OK;
}
static void f_free(parity_plugin_device_t *d, parity_plugin_buffer_t *b) {
  (void)d;
  if (b) free(b->data);
  free(b);
}
static int32_t f_io(parity_plugin_device_t *d, parity_plugin_buffer_t *b, uint64_t o, const void *s, uint64_t n) {
  (void)d, (void)b, (void)o, (void)s, (void)n;
  return maybe_report(status());
}
static int32_t f_read(parity_plugin_device_t *d, parity_plugin_buffer_t *b, uint64_t o, void *s, uint64_t n) {
  (void)d, (void)b, (void)o, (void)s, (void)n;
  return maybe_report(status());
}
static int32_t f_copy(parity_plugin_device_t *d, parity_plugin_buffer_t *s, uint64_t so, parity_plugin_buffer_t *t,
                      uint64_t to, uint64_t n) {
  (void)d, (void)s, (void)so, (void)t, (void)to, (void)n;
  return maybe_report(status());
}
static int32_t f_fill(parity_plugin_device_t *d, parity_plugin_buffer_t *b, uint64_t o, uint64_t n, const void *p,
                      uint32_t ps) {
  (void)d, (void)b, (void)o, (void)n, (void)p, (void)ps;
  return maybe_report(status());
}
static int32_t f_sync(parity_plugin_device_t *d) {
  (void)d;
  return maybe_report(status());
}
static int32_t f_supports(parity_plugin_device_t *d, const parity_op_desc_t *desc) {
  (void)d, (void)desc;
  return maybe_report(status());
}

static parity_plugin_api_t table = {.init = f_init,
                                    .shutdown = f_shutdown,
                                    .get_device_count = f_count,
                                    .get_device_info = f_info,
                                    .device_open = f_open,
                                    .device_close = f_close,
                                    .buffer_alloc = f_alloc,
                                    .buffer_free = f_free,
                                    .buffer_write = f_io,
                                    .buffer_read = f_read,
                                    .buffer_copy = f_copy,
                                    .buffer_fill = f_fill,
                                    .synchronize = f_sync,
                                    .supports = f_supports};

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor, const parity_host_api_t *h,
                                                 parity_plugin_info_t *out) {
  (void)host_major, (void)host_minor;
  host = h;
  int32_t st = status();
  out->name = (u32() & 15) ? str(0) : NULL;
  out->backend = (u32() & 15) ? str(1) : NULL;
  out->version = str(2);
  out->refusal = (u32() & 1) ? str(3) : NULL;
  out->abi_major = (u32() & 7) ? PARITY_ABI_MAJOR : u32();
  out->abi_minor = u32() % 4;
  uint32_t size = u32();
  table.struct_size = (size & 3) ? (uint32_t)sizeof table : size % (uint32_t)(sizeof table + 1);
  out->api = (u32() & 15) ? &table : NULL;
  return maybe_report(st);
}
