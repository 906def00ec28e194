/* check_report.c — reports of a launch: recorded cheaply while the fibers run (the first of each
 * kind and code address pair), then formatted once the launch is over: kernel, block, threads,
 * the buffer (the launch argument holding the allocation) or shared array and offset, and the
 * source lines, which addr2line reads from this object's debug information. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MAX_KEPT 16
#define MAX_SHOWN 4

static chk_report_t kept[MAX_KEPT];
static unsigned nkept, total;
static char message[8192];

void chk_reports_begin(void) {
  nkept = total = 0;
  message[0] = 0;
}

void chk_report(const chk_report_t *r) {
  total++;
  chk_stats.reports++;
  for (unsigned i = 0; i < nkept; i++)
    if (kept[i].kind == r->kind && kept[i].pc == r->pc && kept[i].other_pc == r->other_pc &&
        kept[i].write == r->write) {
      kept[i].count++;
      return;
    }
  if (nkept < MAX_KEPT) {
    kept[nkept] = *r;
    kept[nkept++].count = 1;
  }
}

const char *chk_message(void) { return message; }

/* "matmul.k.h:55 (mm_fwd)", innermost inlined frame first, callers after "<-" */
static void lookup(int32_t pc, char *out, size_t n);
#define CACHED 64
static struct {
  int32_t pc;
  char text[512];
} cache[CACHED];
static unsigned ncached;

static void source_line(int32_t pc, char *out, size_t n) {
  for (unsigned i = 0; i < ncached && i < CACHED; i++)
    if (cache[i].pc == pc) {
      snprintf(out, n, "%s", cache[i].text);
      return;
    }
  lookup(pc, out, n);
  unsigned slot = ncached++ % CACHED;
  cache[slot].pc = pc;
  snprintf(cache[slot].text, sizeof cache[slot].text, "%s", out);
}

static void lookup(int32_t pc, char *out, size_t n) {
  const void *addr = chk_pc_addr(pc);
  Dl_info info;
  snprintf(out, n, "%p", addr);
  if (!dladdr(addr, &info) || !info.dli_fname || !info.dli_fbase || strchr(info.dli_fname, '\'')) return;
  uintptr_t at = (uintptr_t)addr - 1; /* the return address follows the call */
  if (((const Elf64_Ehdr *)info.dli_fbase)->e_type == ET_DYN) at -= (uintptr_t)info.dli_fbase;
  char cmd[1200];
  /* the main program's name may be "" or what it called itself (criterion's "boxfort-worker") */
  char self[1024];
  const char *file = info.dli_fname;
  if (!file[0] || access(file, R_OK) != 0) {
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return;
    self[len] = 0;
    file = self;
  }
  snprintf(cmd, sizeof cmd, "addr2line -f -i -C -e '%s' 0x%lx 2>/dev/null", file, (unsigned long)at);
  FILE *p = popen(cmd, "r");
  if (!p) return;
  char fn[512], loc[512];
  size_t used = 0;
  out[0] = 0;
  /* addr2line -i: the innermost location first, named after the symbol; each caller's location
   * named after the function it is in. Up to the trampoline (emu_shim.h, OpenCL's ocl_shim.h): "a.k.h:5 <- b.k.h:9 (mm_fwd)" */
  for (int frame = 0; fgets(fn, sizeof fn, p) && fgets(loc, sizeof loc, p); frame++) {
    fn[strcspn(fn, "(\n")] = 0;
    loc[strcspn(loc, " \n")] = 0;
    const char *base = strrchr(loc, '/');
    base = base ? base + 1 : loc;
    if ((!strncmp(base, "emu_shim.h", 10) || !strncmp(base, "ocl_shim.h", 10)) && frame > 0) break;
    if (frame == 0)
      used += (size_t)snprintf(out + used, used < n ? n - used : 0, "%s", base);
    else
      used += (size_t)snprintf(out + used, used < n ? n - used : 0, " <- %s (%s)", base, fn);
  }
  pclose(p);
  if (!out[0]) snprintf(out, n, "%p", addr);
}

static void thread_name(uint32_t t, char *out, size_t n) {
  const unsigned *d = chk_now.block_dim;
  if (d[1] == 1 && d[2] == 1)
    snprintf(out, n, "%s %u", chk_words.thread, t);
  else
    snprintf(out, n, "%s (%u,%u,%u)", chk_words.thread, t % d[0], t / d[0] % d[1], t / (d[0] * d[1]));
}

/* the kernel argument whose buffer is the allocation at start */
static int argument_of(uintptr_t start) {
  const chk_kernel_t *k = chk_now.kernel;
  for (int i = 0; i < k->nargs && i < 32; i++)
    if ((k->ptr_mask >> i) & 1u) {
      uintptr_t v = (uintptr_t) * (void *const *)chk_now.params[i], s;
      size_t size;
      unsigned serial;
      if (chk_mem_describe(v, &s, &size, &serial) == 0 && s == start) return i;
    }
  return -1;
}

/* "argument 3 + byte 136 (a buffer of 4096 bytes)", "shared mm_fwd::ta + byte 68 (of 1088)", out of
 * bounds "argument 1 + byte 380, past the end of its 188 bytes" */
static void where(const chk_report_t *r, char *out, size_t n) {
  uintptr_t start;
  size_t size;
  unsigned serial;
  if (r->space == CHK_SHARED) {
    const char *name = chk_shared_name(r->addr, &start, &size);
    if (!name)
      snprintf(out, n, "%s memory at %#lx", chk_words.shared, (unsigned long)r->addr);
    else if (r->addr + r->size <= start + size)
      snprintf(out, n, "%s %s + byte %lu (of %zu)", chk_words.shared, name, (unsigned long)(r->addr - start), size);
    else
      snprintf(out, n, "%s %s + byte %lu, past the end of its %zu bytes", chk_words.shared, name,
               (unsigned long)(r->addr - start), size);
    return;
  }
  if (chk_mem_describe(r->addr, &start, &size, &serial) != 0) {
    snprintf(out, n, "%#lx, outside every allocation", (unsigned long)r->addr);
    return;
  }
  int arg = argument_of(start);
  char buf[64];
  if (arg >= 0)
    snprintf(buf, sizeof buf, "argument %d", arg);
  else
    snprintf(buf, sizeof buf, "allocation #%u", serial);
  if (r->addr + r->size <= start + size)
    snprintf(out, n, "%s + byte %lu (a buffer of %zu bytes)", buf, (unsigned long)(r->addr - start), size);
  else
    snprintf(out, n, "%s + byte %lu, past the end of its %zu bytes", buf, (unsigned long)(r->addr - start), size);
}

static void format(const chk_report_t *r, char *out, size_t n) {
  char at[1024], other_at[1024], me[64], other[96], place[256];
  const char *k = chk_now.kernel->name;
  const chk_words_t *w = &chk_words;
  source_line(r->pc, at, sizeof at);
  thread_name(r->thread, me, sizeof me);
  if (r->kind == CHK_DIVERGENT) {
    thread_name(r->other_thread, other, sizeof other);
    if (r->other_write < 0)
      snprintf(out, n, "divergent barrier in %s, %s %u: %s waits at the barrier at %s; %s exited without reaching it",
               k, w->block, r->block, me, at, other);
    else {
      source_line(r->other_pc, other_at, sizeof other_at);
      snprintf(out, n, "divergent barrier in %s, %s %u: %s waits at the barrier at %s, %s at another one at %s", k,
               w->block, r->block, me, at, other, other_at);
    }
    return;
  }
  where(r, place, sizeof place);
  const char *verb = r->write ? "write" : "read";
  if (r->kind == CHK_OOB)
    snprintf(out, n, "out-of-bounds %s in %s, %s %u, %s: %u bytes at %s, at %s", verb, k, w->block, r->block, me,
             r->size, place, at);
  else if (r->kind == CHK_UNINIT)
    snprintf(out, n, "uninitialised %s read in %s, %s %u, %s: %s, at %s: no %s of the %s wrote it before", w->shared, k,
             w->block, r->block, me, place, at, w->thread, w->block);
  else {
    char ot[64];
    int across = r->other_block != r->block;
    thread_name(r->other_thread, ot, sizeof ot);
    if (across)
      snprintf(other, sizeof other, "%s of %s %u", ot, w->block, r->other_block);
    else
      snprintf(other, sizeof other, "%s", ot);
    source_line(r->other_pc, other_at, sizeof other_at);
    snprintf(out, n, "data race in %s, %s %u: %s %ss %s at %s; %s %s it at %s, %s%s%s", k, w->block, r->block, me, verb,
             place, at, other, r->other_write ? "wrote" : "read", other_at, across ? "and " : "with no barrier between",
             across ? w->blocks : "", across ? " of one launch are not ordered" : "");
  }
}

/* two barrier calls the compiler made of one (a call duplicated into both arms of a branch) are
 * one barrier: only different source lines are divergent */
static void drop_same_barriers(void) {
  for (unsigned i = 0; i < nkept;) {
    char a[512], b[512];
    if (kept[i].kind == CHK_DIVERGENT && kept[i].other_write >= 0) {
      source_line(kept[i].pc, a, sizeof a);
      source_line(kept[i].other_pc, b, sizeof b);
      if (!strcmp(a, b)) {
        total -= kept[i].count;
        chk_stats.reports -= kept[i].count;
        kept[i] = kept[--nkept];
        continue;
      }
    }
    i++;
  }
}

int chk_reports_end(void) {
  size_t used = 0;
  drop_same_barriers();
  for (unsigned i = 0; i < nkept && i < MAX_SHOWN; i++) {
    char line[2600];
    format(&kept[i], line, sizeof line);
    used += (size_t)snprintf(message + used, used < sizeof message ? sizeof message - used : 0, "%s%s: %s",
                             i ? "\n" : "", chk_words.tool, line);
  }
  if (total > 1 && used < sizeof message)
    snprintf(message + used, sizeof message - used, "\n%s: %u reports in this launch of %s (%u distinct)",
             chk_words.tool, total, chk_now.kernel->name, nkept);
  return (int)total;
}
