/* error.c — per-thread last error, status strings and logging. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "parity_support/ops.h"

static _Thread_local char last_error[1024];

const char *parity_last_error(void) { return last_error; }

const char *parity_status_string(parity_status_t status) { return psup_status_name(status); }

/* Copy at most n - 1 bytes of untrusted text (it may lack a NUL), terminate it, and replace
 * control characters so one message stays one line. */
void parity__copy_text(char *dst, size_t n, const char *src) {
  size_t i = 0;
  for (; src && i + 1 < n && src[i]; i++) {
    unsigned char c = (unsigned char)src[i];
    dst[i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
  }
  if (n) dst[i] = 0;
}

/* The same for text of a stated length: reads at most `length` bytes, never past them. */
static void copy_text_n(char *dst, size_t n, const char *src, size_t length) {
  size_t i = 0;
  for (; src && i + 1 < n && i < length && src[i]; i++) {
    unsigned char c = (unsigned char)src[i];
    dst[i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
  }
  if (n) dst[i] = 0;
}

void parity__set_error(parity_status_t status, const char *message) {
  (void)status;
  parity__copy_text(last_error, sizeof last_error, message);
}

void parity__clear_error(void) { last_error[0] = 0; }

parity_status_t parity__fail(parity_status_t status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return status;
}

/* Plugins are process-wide, so their log lines go through the level of the most recently
 * created context. */
_Atomic int parity__plugin_log_level = 1;

void parity__log(const parity_context_t *ctx, int level, const char *fmt, ...) {
  if ((ctx ? ctx->log_level : atomic_load(&parity__plugin_log_level)) < level) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("parity: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Host callbacks given to every plugin. host_data is the context. */
static void host_report_error(void *host_data, int32_t status, const char *message) {
  (void)host_data;
  parity__set_error((parity_status_t)status, message);
}

static void host_log(void *host_data, int32_t level, const char *message) {
  const parity_context_t *ctx = host_data;
  char text[1024];
  parity__copy_text(text, sizeof text, message);
  parity__log(ctx, level >= PARITY_LOG_WARNING ? 1 : 2, "%s", text);
}

static void host_report_error_n(void *host_data, int32_t status, const char *message, size_t length) {
  (void)host_data;
  (void)status;
  copy_text_n(last_error, sizeof last_error, message, length);
}

static void host_log_n(void *host_data, int32_t level, const char *message, size_t length) {
  const parity_context_t *ctx = host_data;
  char text[1024];
  copy_text_n(text, sizeof text, message, length);
  parity__log(ctx, level >= PARITY_LOG_WARNING ? 1 : 2, "%s", text);
}

const parity_host_api_t parity__host_template = {
    .struct_size = sizeof(parity_host_api_t),
    .host_data = NULL,
    .report_error = host_report_error,
    .log = host_log,
    .report_error_n = host_report_error_n,
    .log_n = host_log_n,
};
