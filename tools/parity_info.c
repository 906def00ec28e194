/* parity-info — every plugin found, with its state, ABI version, devices and capabilities.
 * Exits 0 when the selected backend (PARITY_BACKEND / PARITY_DEVICE) is usable, 2 otherwise, 1 when
 * a plugin crashed. The listing runs in a child process: when a plugin crashes while it initialises
 * or lists its devices, every plugin is listed again, each from a child of its own, and the one that
 * crashed is named with the signal. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parity/parity.h"
#include "parity_support/dtype.h"

static const char *type_name(int32_t t) {
  switch (t) {
    case PARITY_DEVICE_TYPE_CPU: return "cpu";
    case PARITY_DEVICE_TYPE_GPU: return "gpu";
    case PARITY_DEVICE_TYPE_SOFTWARE_GPU: return "software-emulated gpu";
    case PARITY_DEVICE_TYPE_OTHER: return "other";
    default: return "unknown";
  }
}

static const char *state_name(int32_t s) {
  switch (s) {
    case PARITY_PLUGIN_STATE_LOADED: return "loaded";
    case PARITY_PLUGIN_STATE_UNAVAILABLE: return "unavailable";
    default: return "skipped";
  }
}

static const char *denormal_name(int32_t d) {
  return d == PARITY_DENORMALS_PRESERVED ? "preserved" : d == PARITY_DENORMALS_FLUSHED ? "flushed" : "unknown";
}

static void json_str(const char *s) {
  putchar('"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void dtypes(uint32_t mask, int json) {
  int first = 1;
  for (int32_t dt = 1; dt <= PARITY_DTYPE_BOOL; dt++) {
    if (!(mask & PARITY_DTYPE_BIT(dt))) continue;
    if (json) {
      printf(first ? "" : ",");
      json_str(psup_dtype_name(dt));
    } else
      printf("%s%s", first ? "" : " ", psup_dtype_name(dt));
    first = 0;
  }
}

static void print_device(const parity_device_info_t *i, uint32_t d, int json) {
  if (json) {
    printf("{\"index\":%u,\"name\":", d);
    json_str(i->name);
    printf(",\"type\":");
    json_str(type_name(i->type));
    printf(",\"driver\":");
    json_str(i->driver);
    printf(",\"memory_bytes\":%llu,\"max_buffer_bytes\":%llu,\"dtypes\":[", (unsigned long long)i->memory_bytes,
           (unsigned long long)i->max_buffer_bytes);
    dtypes(i->dtype_mask, 1);
    printf("],\"float64\":%s,\"deterministic\":%s,\"denormals\":\"%s\",\"math\":",
           (i->flags & PARITY_DEVICE_FLAG_FLOAT64) ? "true" : "false",
           (i->flags & PARITY_DEVICE_FLAG_DETERMINISTIC) ? "true" : "false", denormal_name(i->denormals));
    json_str(i->math);
    printf("}");
    return;
  }
  printf("    device %u: %s [%s]\n", d, i->name, type_name(i->type));
  printf("      driver %s; memory %.1f GiB; max buffer %.1f GiB\n", i->driver, (double)i->memory_bytes / (1 << 30),
         (double)i->max_buffer_bytes / (1 << 30));
  printf("      dtypes: ");
  dtypes(i->dtype_mask, 0);
  printf("; float64 %s; denormals %s; deterministic %s\n", (i->flags & PARITY_DEVICE_FLAG_FLOAT64) ? "yes" : "no",
         denormal_name(i->denormals), (i->flags & PARITY_DEVICE_FLAG_DETERMINISTIC) ? "yes" : "no");
  printf("      math: %s\n", i->math[0] ? i->math : "not stated by the plugin (ABI before 1.2)");
}

/* One plugin's entry (initialising it): its record and devices. */
static void print_plugin(parity_context_t *ctx, uint32_t p, int json, int first) {
  parity_plugin_record_t r;
  parity_context_plugin(ctx, p, &r);
  if (json) {
    printf("%s{\"name\":", first ? "" : ",");
    json_str(r.name);
    printf(",\"backend\":");
    json_str(r.backend);
    printf(",\"path\":");
    json_str(r.path);
    printf(",\"state\":\"%s\",\"abi\":\"%u.%u\",\"reason\":", state_name(r.state), r.abi_major, r.abi_minor);
    json_str(r.reason);
    printf(",\"devices\":[");
  } else {
    printf("  %-10s %-11s ABI %u.%u  %s\n", r.name[0] ? r.name : "?", state_name(r.state), r.abi_major, r.abi_minor,
           r.path);
    if (r.reason[0]) printf("    %s\n", r.reason);
  }
  for (uint32_t d = 0; d < r.device_count; d++) {
    parity_device_info_t info = {.struct_size = sizeof info};
    if (parity_context_device_info(ctx, p, d, &info) != PARITY_STATUS_OK) continue;
    if (json && d) printf(",");
    print_device(&info, d, json);
  }
  if (json) printf("]}");
}

/* The listing as it always was: every plugin initialised in this process. */
static int listing(int json) {
  parity_context_t *ctx;
  if (parity_context_create(NULL, &ctx) != PARITY_STATUS_OK) {
    fprintf(stderr, "parity-info: %s\n", parity_last_error());
    return 2;
  }
  parity_device_t *dev = NULL;
  parity_status_t sel = parity_context_default_device(ctx, &dev);
  char sel_error[1024];
  snprintf(sel_error, sizeof sel_error, "%s", sel == PARITY_STATUS_OK ? "" : parity_last_error());

  uint32_t n = parity_context_plugin_count(ctx);
  if (json)
    printf("{\"host_abi\":\"%u.%u\",\"backend_request\":", PARITY_ABI_MAJOR, PARITY_ABI_MINOR),
        json_str(parity_context_backend_request(ctx)), printf(",\"plugins\":[");
  else
    printf("parity host ABI %u.%u; backend request '%s'\n\nplugins:\n", PARITY_ABI_MAJOR, PARITY_ABI_MINOR,
           parity_context_backend_request(ctx));
  if (!json && n == 0) printf("  (none found)\n");
  for (uint32_t p = 0; p < n; p++) print_plugin(ctx, p, json, p == 0);
  uint32_t notes = parity_context_note_count(ctx);
  if (json) {
    printf("],\"notes\":[");
    for (uint32_t i = 0; i < notes; i++) printf(i ? "," : ""), json_str(parity_context_note(ctx, i));
    printf("],\"selected\":");
    if (dev) {
      printf("{\"plugin\":");
      json_str(parity_device_plugin_name(dev));
      printf(",\"device\":%u}", parity_device_index(dev));
    } else
      printf("null");
    printf(",\"error\":");
    json_str(sel_error);
    printf("}\n");
  } else {
    for (uint32_t i = 0; i < notes; i++) printf("%snote: %s\n", i ? "" : "\n", parity_context_note(ctx, i));
    if (dev) {
      parity_device_info_t info = {.struct_size = sizeof info};
      parity_device_get_info(dev, &info);
      printf("\nselected: plugin '%s', device %u (%s)\n", parity_device_plugin_name(dev), parity_device_index(dev),
             info.name);
    }
  }
  if (!dev) fprintf(stderr, "parity-info: %s\n", sel_error);
  parity_context_destroy(ctx);
  return dev ? 0 : 2;
}

/* run fn(ctx_or_arg) in a child; its exit status, or -signal when it was killed */
static int in_child(int (*fn)(void *), void *arg) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return fn(arg); /* no child: in this process */
  if (pid == 0) { exit(fn(arg)); /* exit, not _exit: a leak checker still checks the child */ }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {}
  return WIFEXITED(status) ? WEXITSTATUS(status) : -(WIFSIGNALED(status) ? WTERMSIG(status) : 1);
}

static int g_json;
static int listing_job(void *arg) {
  (void)arg;
  return listing(g_json);
}

typedef struct one_job {
  const char *name, *path;
  int first;
} one_job;

/* one plugin from a context of its own that initialises only it */
static int one_plugin_job(void *arg) {
  const one_job *j = arg;
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = j->name;
  parity_context_t *ctx;
  if (parity_context_create(&o, &ctx) != PARITY_STATUS_OK) return 2;
  for (uint32_t p = 0; p < parity_context_plugin_count(ctx); p++) {
    parity_plugin_record_t r;
    parity_context_plugin_peek(ctx, p, &r);
    if (strcmp(r.path, j->path) == 0) print_plugin(ctx, p, g_json, j->first);
  }
  parity_context_destroy(ctx);
  return 0;
}

/* After a crash: every plugin again, each in a child, the one that crashes named. */
static int crash_listing(int sig) {
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = "-"; /* identify each plugin from its file; initialise none here */
  parity_context_t *ctx;
  if (parity_context_create(&o, &ctx) != PARITY_STATUS_OK) {
    fprintf(stderr, "parity-info: %s\n", parity_last_error());
    return 2;
  }
  if (g_json)
    printf("{\"host_abi\":\"%u.%u\",\"plugins\":[", PARITY_ABI_MAJOR, PARITY_ABI_MINOR);
  else
    printf("\nparity-info: a plugin crashed (SIG%s); each plugin again, on its own:\n\nplugins:\n", sigabbrev_np(sig));
  int crashed = 0;
  for (uint32_t p = 0; p < parity_context_plugin_count(ctx); p++) {
    parity_plugin_record_t r;
    parity_context_plugin_peek(ctx, p, &r);
    one_job j = {r.name, r.path, p == 0};
    int rc = r.name[0] ? in_child(one_plugin_job, &j) : 0;
    if (rc >= 0) continue;
    crashed++;
    const char *what = sigabbrev_np(-rc);
    if (g_json) {
      printf("%s{\"name\":", p ? "," : "");
      json_str(r.name);
      printf(",\"path\":");
      json_str(r.path);
      printf(
          ",\"state\":\"crashed\",\"reason\":\"crashed with SIG%s while initialising or listing its devices\","
          "\"devices\":[]}",
          what ? what : "?");
    } else {
      printf("  %-10s %-11s ABI %u.%u  %s\n    crashed with SIG%s while initialising or listing its devices\n", r.name,
             "crashed", r.abi_major, r.abi_minor, r.path, what ? what : "?");
    }
  }
  if (g_json)
    printf("],\"selected\":null,\"error\":\"a plugin crashed\"}\n");
  else
    printf("\nselected: none (%d plugin(s) crashed; PARITY_BACKEND=NAME selects one of the others)\n", crashed);
  parity_context_destroy(ctx);
  return 1;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      g_json = 1;
    else {
      fprintf(stderr,
              "usage: parity-info [--json]\n"
              "  lists every plugin found, its state, ABI version, devices and capabilities;\n"
              "  exits non-zero when the backend PARITY_BACKEND selects is unavailable, 1 when a\n"
              "  plugin crashed (named with the signal; the others are still listed)\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  int rc = in_child(listing_job, NULL);
  return rc >= 0 ? rc : crash_listing(-rc);
}
