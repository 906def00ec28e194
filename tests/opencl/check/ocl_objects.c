/* ocl_objects.c — the fake OpenCL ICD's buffers, programs, kernels and launches (ocl_check.h).
 * Buffers are allocations of the executor's arena (chk_mem_alloc: bounds and shadow apply); every
 * command runs when it is enqueued (an in-order queue that is always drained), but a non-blocking
 * write, which runs when the next command is enqueued or the queue is finished (below). A program is told
 * apart by the prelude the plugin writes (plugins/opencl/cl_cache.c): its class (OCL_CLASS), the
 * kernels it holds (K_<kernel> 1), its layout and math settings, which must be those the host
 * compile of the kernels assumed (ocl_module.cpp), and its variant (SPEC_OP, SPEC_DT, SPEC_DT2),
 * applied at launch. Binaries are refused (the plugin builds from source; its cache stays empty:
 * a program's binary size is 0). A launch runs under the executor (chk_launch); a report fails it
 * with CL_OUT_OF_RESOURCES and goes to stderr. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/kp_kernels.h"
#include "ocl_check.h"

#define MAX_PRINTED 10 /* launches whose reports are printed; the rest are counted */

int ocl_chk_spec[3];

/* the kernels compiled for the executor (ocl_module.cpp), per variant (0: the GPU layout, OCL_CONTIG 0;
 * 1: the CPU layout, OCL_CONTIG 1; 2: the GPU layout without float64, HAS_FP64 0, the float class's
 * own and the integer classes' variant-0 objects, which float64 does not change), family and class */
#define OCL_TABLES_(l)                                                                                            \
  extern const chk_kernel_t ocl_chk_kernels_0_0_##l[], ocl_chk_kernels_0_1_##l[], ocl_chk_kernels_0_2_##l[],      \
      ocl_chk_kernels_0_3_##l[], ocl_chk_kernels_1_0_##l[], ocl_chk_kernels_1_1_##l[], ocl_chk_kernels_1_2_##l[], \
      ocl_chk_kernels_1_3_##l[], ocl_chk_kernels_2_0_##l[], ocl_chk_kernels_2_1_##l[], ocl_chk_kernels_3_0_##l[], \
      ocl_chk_kernels_3_1_##l[], ocl_chk_kernels_4_0_##l[], ocl_chk_kernels_4_1_##l[], ocl_chk_kernels_5_0_##l[], \
      ocl_chk_kernels_5_1_##l[];
OCL_TABLES_(0)
OCL_TABLES_(1)
extern const chk_kernel_t ocl_chk_kernels_0_0_2[], ocl_chk_kernels_1_0_2[], ocl_chk_kernels_2_0_2[],
    ocl_chk_kernels_3_0_2[], ocl_chk_kernels_4_0_2[], ocl_chk_kernels_5_0_2[];
#define OCL_TABLE_(l)                                                                                         \
  {                                                                                                           \
    {ocl_chk_kernels_0_0_##l, ocl_chk_kernels_0_1_##l, ocl_chk_kernels_0_2_##l, ocl_chk_kernels_0_3_##l},     \
        {ocl_chk_kernels_1_0_##l, ocl_chk_kernels_1_1_##l, ocl_chk_kernels_1_2_##l, ocl_chk_kernels_1_3_##l}, \
        {ocl_chk_kernels_2_0_##l, ocl_chk_kernels_2_1_##l, NULL, NULL},                                       \
        {ocl_chk_kernels_3_0_##l, ocl_chk_kernels_3_1_##l, NULL, NULL},                                       \
        {ocl_chk_kernels_4_0_##l, ocl_chk_kernels_4_1_##l, NULL, NULL},                                       \
        {ocl_chk_kernels_5_0_##l, ocl_chk_kernels_5_1_##l, NULL, NULL},                                       \
  }
static const chk_kernel_t *const tables[3][6][4] = {
    OCL_TABLE_(0),
    OCL_TABLE_(1),
    {
        {ocl_chk_kernels_0_0_2, NULL, ocl_chk_kernels_0_2_0, ocl_chk_kernels_0_3_0},
        {ocl_chk_kernels_1_0_2, NULL, ocl_chk_kernels_1_2_0, ocl_chk_kernels_1_3_0},
        {ocl_chk_kernels_2_0_2, NULL, NULL, NULL},
        {ocl_chk_kernels_3_0_2, NULL, NULL, NULL},
        {ocl_chk_kernels_4_0_2, NULL, NULL, NULL},
        {ocl_chk_kernels_5_0_2, NULL, NULL, NULL},
    },
};
#undef OCL_TABLES_
#undef OCL_TABLE_

/* kp_kernels.h's names and families (EW = 0 ... POOL = 5, the order of tables) */
enum { FAM_EW, FAM_RED, FAM_SMX, FAM_MM, FAM_CONV, FAM_POOL };
#define NAME_(X, name, family, cuda, barrier) #name,
static const char *const kernel_names[KP_K_COUNT] = {KP_KERNEL_TABLE(NAME_, _)};
#undef NAME_
#define FAM_(X, name, family, cuda, barrier) FAM_##family,
static const int kernel_family[KP_K_COUNT] = {KP_KERNEL_TABLE(FAM_, _)};
#undef FAM_

static int kernel_id(const char *name, size_t len) {
  for (int k = 0; k < KP_K_COUNT; k++)
    if (strlen(kernel_names[k]) == len && !strncmp(kernel_names[k], name, len)) return k;
  return -1;
}

/* ---- buffers and transfers ---- */
static int is_mem(cl_mem m) { return m && m->dispatch == &ocl_chk_dispatch && m->magic == OCL_MAGIC_MEM; }
static int is_queue(cl_command_queue q) { return q && q->magic == OCL_MAGIC_QUEUE; }

cl_mem CL_API_CALL ocl_chk_create_buffer(cl_context c, cl_mem_flags flags, size_t size, void *host, cl_int *err) {
  cl_int e = CL_SUCCESS;
  cl_mem m = NULL;
  if (!c || c->magic != OCL_MAGIC_CTX)
    e = CL_INVALID_CONTEXT;
  else if (size == 0 || size > ((size_t)1 << 30))
    e = CL_INVALID_BUFFER_SIZE;
  else if (host || (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)))
    e = CL_INVALID_HOST_PTR; /* the plugin never passes host memory */
  else if (!(m = calloc(1, sizeof *m)))
    e = CL_OUT_OF_HOST_MEMORY;
  else if (chk_mem_alloc(size, &m->ptr) != 0) {
    free(m);
    m = NULL;
    e = CL_MEM_OBJECT_ALLOCATION_FAILURE;
  } else {
    m->dispatch = &ocl_chk_dispatch;
    m->magic = OCL_MAGIC_MEM;
    m->refs = 1;
    m->ctx = c;
    m->size = size;
  }
  if (err) *err = e;
  return m;
}

cl_int CL_API_CALL ocl_chk_retain_mem(cl_mem m) {
  if (!is_mem(m)) return CL_INVALID_MEM_OBJECT;
  m->refs++;
  return CL_SUCCESS;
}

cl_int CL_API_CALL ocl_chk_release_mem(cl_mem m) {
  if (!is_mem(m)) return CL_INVALID_MEM_OBJECT;
  if (--m->refs == 0) {
    chk_mem_free(m->ptr);
    m->magic = 0;
    free(m);
  }
  return CL_SUCCESS;
}

/* ---- writes the queue has not run yet ---- */
/* A non-blocking clEnqueueWriteBuffer returns before the copy: a GPU's DMA reads the host memory
 * when the queue reaches the write, so the caller must leave that memory alone until the queue has
 * drained (the plugin writes from a staged copy, plugins/opencl/cl_memory.c). Run at once, such a
 * write hid a caller that reused the memory. It runs here when the next command is enqueued or the
 * queue is finished or released, from the memory as it is then, and if that memory changed in
 * between, the change is said and the command that ran the write fails. */
typedef struct {
  cl_mem m;
  size_t off, size;
  const void *src;
  unsigned char *snap; /* the source's bytes when the write was enqueued */
} pending_t;
static pending_t *pending;
static size_t npending, cap_pending;

cl_int ocl_chk_drain(void) {
  cl_int e = CL_SUCCESS;
  for (size_t i = 0; i < npending; i++) {
    pending_t *p = &pending[i];
    if (memcmp(p->src, p->snap, p->size) != 0) {
      ocl_chk_say(
          "a non-blocking clEnqueueWriteBuffer's source (%zu bytes at %p) changed before the queue ran the "
          "write: the caller reused memory the queue still held",
          p->size, p->src);
      e = CL_OUT_OF_RESOURCES;
    }
    memcpy((char *)p->m->ptr + p->off, p->src, p->size); /* what a device would copy then */
    free(p->snap);
    ocl_chk_release_mem(p->m);
  }
  npending = 0;
  return e;
}

static cl_int defer_write(cl_mem m, size_t off, size_t size, const void *src) {
  if (npending == cap_pending) {
    size_t cap = cap_pending ? 2 * cap_pending : 16;
    pending_t *n = realloc(pending, cap * sizeof *n);
    if (!n) return CL_OUT_OF_HOST_MEMORY;
    pending = n, cap_pending = cap;
  }
  unsigned char *snap = malloc(size ? size : 1);
  if (!snap) return CL_OUT_OF_HOST_MEMORY;
  memcpy(snap, src, size);
  ocl_chk_retain_mem(m);
  pending[npending++] = (pending_t){m, off, size, src, snap};
  return CL_SUCCESS;
}

/* a command's common checks: the queue, no events, the range inside the buffer; then the writes
 * enqueued before it run (in order) */
static cl_int command(cl_command_queue q, cl_mem m, size_t off, size_t size, cl_uint nwait, cl_event *ev) {
  if (!is_queue(q)) return CL_INVALID_COMMAND_QUEUE;
  cl_int drained = ocl_chk_drain();
  if (drained != CL_SUCCESS) return drained;
  if (nwait || ev) {
    ocl_chk_say("events are not supported (the queue is in order and always drained)");
    return CL_INVALID_EVENT_WAIT_LIST;
  }
  if (!is_mem(m)) return CL_INVALID_MEM_OBJECT;
  if (off > m->size || size > m->size - off) return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

cl_int CL_API_CALL ocl_chk_read(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t size, void *dst,
                                cl_uint nwait, const cl_event *wait, cl_event *ev) {
  cl_int e = command(q, m, off, size, nwait, ev);
  if (e == CL_SUCCESS && !dst) e = CL_INVALID_VALUE;
  if (e == CL_SUCCESS) memcpy(dst, (char *)m->ptr + off, size);
  return e;
}

cl_int CL_API_CALL ocl_chk_write(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t size, const void *src,
                                 cl_uint nwait, const cl_event *wait, cl_event *ev) {
  cl_int e = command(q, m, off, size, nwait, ev);
  if (e == CL_SUCCESS && !src) e = CL_INVALID_VALUE;
  if (e == CL_SUCCESS && !block) return defer_write(m, off, size, src);
  if (e == CL_SUCCESS) memcpy((char *)m->ptr + off, src, size);
  return e;
}

cl_int CL_API_CALL ocl_chk_copy(cl_command_queue q, cl_mem src, cl_mem dst, size_t so, size_t dof, size_t size,
                                cl_uint nwait, const cl_event *wait, cl_event *ev) {
  cl_int e = command(q, src, so, size, nwait, ev);
  if (e == CL_SUCCESS) e = command(q, dst, dof, size, 0, NULL);
  if (e == CL_SUCCESS && src == dst && so < dof + size && dof < so + size) e = CL_MEM_COPY_OVERLAP;
  if (e == CL_SUCCESS) memmove((char *)dst->ptr + dof, (char *)src->ptr + so, size);
  return e;
}

cl_int CL_API_CALL ocl_chk_fill(cl_command_queue q, cl_mem m, const void *pattern, size_t psize, size_t off,
                                size_t size, cl_uint nwait, const cl_event *wait, cl_event *ev) {
  cl_int e = command(q, m, off, size, nwait, ev);
  if (e != CL_SUCCESS) return e;
  if (!pattern || !psize || psize > 128 || (psize & (psize - 1)) || off % psize || size % psize)
    return CL_INVALID_VALUE;
  for (size_t i = 0; i < size; i += psize) memcpy((char *)m->ptr + off + i, pattern, psize);
  return CL_SUCCESS;
}

/* ---- programs ---- */
static int is_program(cl_program p) { return p && p->magic == OCL_MAGIC_PROG; }

/* one "#define NAME value" line of a source: K_<kernel>, OCL_CLASS, the layout and the variant */
static void prelude_line(cl_program p, const char *s, size_t n) {
  if (n < 8 || strncmp(s, "#define ", 8)) return;
  s += 8, n -= 8;
  size_t name = strcspn(s, " (\n");
  if (name >= n || s[name] != ' ') return;
  const char *v = s + name + 1;
  long value = strtol(*v == '(' ? v + 1 : v, NULL, 10);
  static const char *const keys[] = {"OCL_CLASS", "OCL_CONTIG", "OCL_LIB_DIV", "HAS_FP64",
                                     "HAS_FMA",   "SPEC_OP",    "SPEC_DT",     "SPEC_DT2"};
  int *const at[] = {&p->cls, &p->contig, &p->lib_div, &p->fp64, &p->fma, &p->spec[0], &p->spec[1], &p->spec[2]};
  for (int i = 0; i < 8; i++)
    if (strlen(keys[i]) == name && !strncmp(s, keys[i], name)) {
      *at[i] = (int)value;
      return;
    }
  if (name > 2 && !strncmp(s, "K_", 2)) {
    int k = kernel_id(s + 2, name - 2);
    if (k >= 0 && value) p->want[k] = 1;
  }
}

cl_program CL_API_CALL ocl_chk_program_source(cl_context c, cl_uint count, const char **strings, const size_t *lengths,
                                              cl_int *err) {
  cl_program p = NULL;
  cl_int e = !c || c->magic != OCL_MAGIC_CTX ? CL_INVALID_CONTEXT : !count || !strings ? CL_INVALID_VALUE : CL_SUCCESS;
  if (e == CL_SUCCESS && (!(p = calloc(1, sizeof *p)) || !(p->want = calloc(KP_K_COUNT, 1)))) {
    if (p) free(p);
    p = NULL;
    e = CL_OUT_OF_HOST_MEMORY;
  }
  if (e == CL_SUCCESS) {
    p->dispatch = &ocl_chk_dispatch;
    p->magic = OCL_MAGIC_PROG;
    p->refs = 1;
    p->ctx = c;
    p->cls = p->contig = p->lib_div = p->fp64 = p->fma = p->fam = -1;
    /* only the first source's definitions count: the prelude (the later sources define other names) */
    const char *s = strings[0];
    size_t n = lengths && lengths[0] ? lengths[0] : strlen(s);
    for (size_t i = 0; s && i < n;) {
      size_t len = 0;
      while (i + len < n && s[i + len] != '\n') len++;
      prelude_line(p, s + i, len);
      i += len + 1;
    }
  }
  if (err) *err = e;
  return p;
}

cl_program CL_API_CALL ocl_chk_program_binary(cl_context c, cl_uint n, const cl_device_id *d, const size_t *lengths,
                                              const unsigned char **bins, cl_int *status, cl_int *err) {
  if (status && n) status[0] = CL_INVALID_BINARY;
  if (err) *err = CL_INVALID_BINARY; /* programs are built from source (their binary size is 0) */
  return NULL;
}

/* the families whose float programs take pmathf's division where the device lacks correctly
 * rounded division (plugins/opencl/cl_cache.c's uses_pmathf; matmul and conv2d divide nothing) */
static int lib_div_family(int fam) { return fam == FAM_EW || fam == FAM_RED || fam == FAM_SMX || fam == FAM_POOL; }

/* why the program's prelude is not one the host compile of the kernels matches ("" when it is):
 * the device's math decides which (ocl_module.cpp): with float64 (gpu, cpu) HAS_FP64 1 and built-in
 * division; without (gpu-fp32) HAS_FP64 0, no float64 class, and in the float class pmathf's
 * division in the families that divide */
static void program_check(cl_program p, char *why, size_t n) {
  why[0] = 0;
  int fam = -1, first = 0;
  for (int k = 0; k < KP_K_COUNT; k++)
    if (p->want[k]) {
      if (fam >= 0 && kernel_family[k] != fam) {
        snprintf(why, n, "kernels of two families in one program");
        return;
      }
      if (fam < 0) first = k;
      fam = kernel_family[k];
    }
  int fp64 = !ocl_chk_fp32_only, lib_div = !fp64 && p->cls == 0 && fam >= 0 && lib_div_family(fam);
  if (fam < 0)
    snprintf(why, n, "no parity kernel wanted (no K_<kernel> 1 in the first source)");
  else if (p->cls < 0 || p->cls > 3 || !tables[0][fam][p->cls])
    snprintf(why, n, "OCL_CLASS %d: no such class of the family of %s", p->cls, kernel_names[first]);
  else if (p->contig != 0 && p->contig != 1)
    snprintf(why, n, "OCL_CONTIG %d: the kernels are compiled for the GPU layout (0) and the CPU layout (1) only",
             p->contig);
  else if (p->fp64 != fp64)
    snprintf(why, n, "HAS_FP64 %d: this device %s cl_khr_fp64, and its kernels are compiled with HAS_FP64 %d", p->fp64,
             fp64 ? "has" : "lacks", fp64);
  else if (!fp64 && p->cls == 1)
    snprintf(why, n, "OCL_CLASS 1 (float64) on a device without cl_khr_fp64");
  else if (!fp64 && p->contig)
    snprintf(why, n, "OCL_CONTIG 1 without float64: the kernels without it are compiled for the GPU layout only");
  else if ((p->lib_div > 0) != lib_div)
    snprintf(why, n,
             "OCL_LIB_DIV %d in class %d: the kernels are compiled with %s division here (OCL_LIB_DIV %d: the device "
             "%s correctly rounded division and sqrt)",
             p->lib_div, p->cls, lib_div ? "pmathf's" : "built-in", lib_div, fp64 ? "reports" : "lacks");
  else if (p->fma != (p->cls == 0))
    snprintf(why, n, "HAS_FMA %d in class %d: the kernels are compiled with HAS_FMA in the float class only", p->fma,
             p->cls);
  p->fam = fam;
}

/* the program's variant of the kernels (tables' first index) */
static int program_variant(cl_program p) { return p->contig ? 1 : p->fp64 ? 0 : 2; }

cl_int CL_API_CALL ocl_chk_build(cl_program p, cl_uint n, const cl_device_id *devs, const char *options,
                                 void(CL_CALLBACK *notify)(cl_program, void *), void *user) {
  if (!is_program(p)) return CL_INVALID_PROGRAM;
  if (n && (!devs || devs[0] != &ocl_chk_device)) return CL_INVALID_DEVICE;
  char why[256];
  program_check(p, why, sizeof why);
  if (why[0]) {
    snprintf(p->log, sizeof p->log, "opencl-check: %s", why);
    ocl_chk_say("clBuildProgram: %s", why);
    return CL_BUILD_PROGRAM_FAILURE;
  }
  p->built = 1;
  p->log[0] = 0;
  if (notify) notify(p, user);
  return CL_SUCCESS;
}

cl_int CL_API_CALL ocl_chk_program_info(cl_program p, cl_program_info what, size_t size, void *out, size_t *size_ret) {
  if (!is_program(p)) return CL_INVALID_PROGRAM;
  const size_t zero = 0;
  const cl_uint one = 1;
  switch (what) {
    case CL_PROGRAM_BINARY_SIZES: return ocl_chk_answer(&zero, sizeof zero, size, out, size_ret);
    case CL_PROGRAM_NUM_DEVICES: return ocl_chk_answer(&one, sizeof one, size, out, size_ret);
    case CL_PROGRAM_REFERENCE_COUNT: return ocl_chk_answer(&p->refs, sizeof(cl_uint), size, out, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL ocl_chk_build_info(cl_program p, cl_device_id d, cl_program_build_info what, size_t size, void *out,
                                      size_t *size_ret) {
  if (!is_program(p)) return CL_INVALID_PROGRAM;
  if (d != &ocl_chk_device) return CL_INVALID_DEVICE;
  cl_build_status st = p->built ? CL_BUILD_SUCCESS : p->log[0] ? CL_BUILD_ERROR : CL_BUILD_NONE;
  switch (what) {
    case CL_PROGRAM_BUILD_LOG: return ocl_chk_answer(p->log, strlen(p->log) + 1, size, out, size_ret);
    case CL_PROGRAM_BUILD_STATUS: return ocl_chk_answer(&st, sizeof st, size, out, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL ocl_chk_retain_program(cl_program p) {
  if (!is_program(p)) return CL_INVALID_PROGRAM;
  p->refs++;
  return CL_SUCCESS;
}

cl_int CL_API_CALL ocl_chk_release_program(cl_program p) {
  if (!is_program(p)) return CL_INVALID_PROGRAM;
  if (--p->refs == 0) {
    p->magic = 0;
    free(p->want);
    free(p);
  }
  return CL_SUCCESS;
}

/* ---- kernels ---- */
static int is_kernel(cl_kernel k) { return k && k->magic == OCL_MAGIC_KERNEL; }

cl_kernel CL_API_CALL ocl_chk_create_kernel(cl_program p, const char *name, cl_int *err) {
  cl_int e = CL_SUCCESS;
  const chk_kernel_t *t = NULL;
  int id = name ? kernel_id(name, strlen(name)) : -1;
  if (!is_program(p))
    e = CL_INVALID_PROGRAM;
  else if (!p->built)
    e = CL_INVALID_PROGRAM_EXECUTABLE;
  else if (!name)
    e = CL_INVALID_VALUE;
  else if (id >= 0 && p->want[id])
    for (t = tables[program_variant(p)][p->fam][p->cls]; t->name && strcmp(t->name, name); t++) {}
  /* not in the program, or not in its layout (the CPU layout's *_blk kernels in the GPU layout) */
  if (e == CL_SUCCESS && (!t || !t->name)) {
    ocl_chk_say(
        "clCreateKernel: no kernel '%s' in this program (class %d)%s", name, p->cls,
        id >= 0 && strstr(name, "_blk") && !p->contig ? ": the CPU layout's kernels are not in the GPU layout" : "");
    e = CL_INVALID_KERNEL_NAME;
  }
  cl_kernel k = NULL;
  if (e == CL_SUCCESS && t->nargs > OCL_CHK_MAX_ARGS) e = CL_INVALID_KERNEL_DEFINITION;
  if (e == CL_SUCCESS && (!(k = calloc(1, sizeof *k)) ||
                          !(k->args = aligned_alloc(16, (size_t)(t->nargs ? t->nargs : 1) * OCL_CHK_ARG_BYTES)))) {
    free(k);
    k = NULL;
    e = CL_OUT_OF_HOST_MEMORY;
  }
  if (k) {
    k->dispatch = &ocl_chk_dispatch;
    k->magic = OCL_MAGIC_KERNEL;
    k->refs = 1;
    k->prog = p;
    k->k = t;
    p->refs++;
  }
  if (err) *err = e;
  return k;
}

cl_int CL_API_CALL ocl_chk_set_arg(cl_kernel k, cl_uint i, size_t size, const void *value) {
  if (!is_kernel(k)) return CL_INVALID_KERNEL;
  const chk_kernel_t *t = k->k;
  if (i >= (cl_uint)t->nargs) return CL_INVALID_ARG_INDEX;
  unsigned char *slot = k->args + (size_t)i * OCL_CHK_ARG_BYTES;
  if ((t->ptr_mask >> i) & 1u) { /* a buffer: the kernel sees its device pointer */
    if (size != sizeof(cl_mem)) return CL_INVALID_ARG_SIZE;
    cl_mem m = value ? *(const cl_mem *)value : NULL;
    if (m && !is_mem(m)) return CL_INVALID_MEM_OBJECT;
    void *ptr = m ? m->ptr : NULL;
    memcpy(slot, &ptr, sizeof ptr);
  } else {
    if (size != t->psizes[i] || size > OCL_CHK_ARG_BYTES) return CL_INVALID_ARG_SIZE;
    if (!value) return CL_INVALID_ARG_VALUE; /* no kernel takes a __local argument */
    memcpy(slot, value, size);
  }
  k->set |= 1u << i;
  return CL_SUCCESS;
}

cl_int CL_API_CALL ocl_chk_wg_info(cl_kernel k, cl_device_id d, cl_kernel_work_group_info what, size_t size, void *out,
                                   size_t *size_ret) {
  if (!is_kernel(k)) return CL_INVALID_KERNEL;
  if (d && d != &ocl_chk_device) return CL_INVALID_DEVICE;
  const size_t reqd[3] = {k->k->reqd_wg[0], k->k->reqd_wg[1], k->k->reqd_wg[2]}; /* 0, 0, 0: none */
  /* a declared size is the only one the kernel runs with: its product is the smallest largest size a
   * driver may answer (PoCL 3.1 answers its device maximum either way), so the plugin must cope with it */
  const size_t wg = reqd[0] ? reqd[0] * (reqd[1] ? reqd[1] : 1) * (reqd[2] ? reqd[2] : 1) : OCL_CHK_WG;
  const cl_ulong local = 0;
  switch (what) {
    case CL_KERNEL_WORK_GROUP_SIZE: return ocl_chk_answer(&wg, sizeof wg, size, out, size_ret);
    case CL_KERNEL_COMPILE_WORK_GROUP_SIZE: return ocl_chk_answer(reqd, sizeof reqd, size, out, size_ret);
    case CL_KERNEL_LOCAL_MEM_SIZE: return ocl_chk_answer(&local, sizeof local, size, out, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL ocl_chk_retain_kernel(cl_kernel k) {
  if (!is_kernel(k)) return CL_INVALID_KERNEL;
  k->refs++;
  return CL_SUCCESS;
}

cl_int CL_API_CALL ocl_chk_release_kernel(cl_kernel k) {
  if (!is_kernel(k)) return CL_INVALID_KERNEL;
  if (--k->refs == 0) {
    ocl_chk_release_program(k->prog);
    k->magic = 0;
    free(k->args);
    free(k);
  }
  return CL_SUCCESS;
}

/* ---- launches ---- */
static unsigned failed_launches;

/* a kernel declared with reqd_work_group_size runs only with that local size, given (a NULL one is
 * refused too: OpenCL 1.2, clEnqueueNDRangeKernel's CL_INVALID_WORK_GROUP_SIZE) */
static cl_int required_size(cl_kernel k, cl_uint dims, const size_t *local) {
  const unsigned *r = k->k->reqd_wg;
  if (!r[0]) return CL_SUCCESS;
  size_t l[3] = {1, 1, 1};
  for (cl_uint d = 0; local && d < dims; d++) l[d] = local[d];
  if (local && l[0] == r[0] && l[1] == r[1] && l[2] == r[2]) return CL_SUCCESS;
  char given[64] = "NULL (the implementation's choice)";
  if (local) snprintf(given, sizeof given, "%zu x %zu x %zu", l[0], l[1], l[2]);
  ocl_chk_say("clEnqueueNDRangeKernel: %s: local size %s, but the kernel declares reqd_work_group_size(%u, %u, %u)",
              k->k->name, given, r[0], r[1], r[2]);
  return CL_INVALID_WORK_GROUP_SIZE;
}

/* the launch's work-groups and work-items: grid in x only (the executor's), what the plugin asks */
static cl_int geometry(cl_kernel k, cl_uint dims, const size_t *offset, const size_t *global, const size_t *local,
                       unsigned grid[3], unsigned block[3]) {
  if (dims < 1 || dims > 3 || !global) return CL_INVALID_WORK_DIMENSION;
  cl_int e = required_size(k, dims, local);
  if (e != CL_SUCCESS) return e;
  for (cl_uint d = 0; d < 3; d++) {
    size_t g = d < dims ? global[d] : 1, l = d < dims ? (local ? local[d] : d == 0 && g <= 64 ? g : 1) : 1;
    if (offset && d < dims && offset[d]) return CL_INVALID_GLOBAL_OFFSET;
    if (!g || !l || g % l) return CL_INVALID_WORK_GROUP_SIZE;
    if (g / l > CHK_MAX_BLOCKS || l > OCL_CHK_WG) return CL_INVALID_WORK_GROUP_SIZE;
    grid[d] = (unsigned)(g / l);
    block[d] = (unsigned)l;
  }
  if (grid[1] != 1 || grid[2] != 1) {
    ocl_chk_say("%s: %u x %u x %u work-groups: the executor runs work-groups along dimension 0 only", k->k->name,
                grid[0], grid[1], grid[2]);
    return CL_INVALID_WORK_GROUP_SIZE;
  }
  if ((unsigned long long)block[0] * block[1] * block[2] > OCL_CHK_WG) return CL_INVALID_WORK_GROUP_SIZE;
  return CL_SUCCESS;
}

cl_int CL_API_CALL ocl_chk_ndrange(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *offset,
                                   const size_t *global, const size_t *local, cl_uint nwait, const cl_event *wait,
                                   cl_event *ev) {
  if (!is_queue(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!is_kernel(k)) return CL_INVALID_KERNEL;
  if (nwait || ev) return CL_INVALID_EVENT_WAIT_LIST;
  cl_int drained = ocl_chk_drain(); /* the writes enqueued before the launch */
  if (drained != CL_SUCCESS) return drained;
  const chk_kernel_t *t = k->k;
  if (k->set != (t->nargs >= 32 ? ~0u : (1u << t->nargs) - 1u)) return CL_INVALID_KERNEL_ARGS;
  unsigned grid[3], block[3];
  cl_int e = geometry(k, dims, offset, global, local, grid, block);
  if (e != CL_SUCCESS) return e;
  void *params[OCL_CHK_MAX_ARGS];
  for (int i = 0; i < t->nargs; i++) params[i] = k->args + (size_t)i * OCL_CHK_ARG_BYTES;
  memcpy(ocl_chk_spec, k->prog->spec, sizeof ocl_chk_spec);
  int n = chk_launch(t, grid, block, params);
  if (n < 0) {
    fprintf(stderr, "%s\n", chk_failure());
    return CL_INVALID_WORK_GROUP_SIZE;
  }
  if (n == 0) return CL_SUCCESS;
  if (++failed_launches <= MAX_PRINTED) fprintf(stderr, "%s\n", chk_message());
  return CL_OUT_OF_RESOURCES;
}

__attribute__((destructor)) static void fini(void) {
  if (failed_launches > MAX_PRINTED)
    ocl_chk_say("%u launches failed in all; the reports of the first %u are above", failed_launches, MAX_PRINTED);
  chk_stats_write();
}
