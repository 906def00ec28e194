/* ocl_check.h — the fake OpenCL ICD of the OpenCL checking executor (README.md here): one platform,
 * one GPU-type device, and the objects the OpenCL plugin uses (plugins/opencl), each starting with
 * the ICD dispatch pointer. ocl_icd.c: the dispatch table, platform, device, context and queue;
 * ocl_objects.c: buffers and transfers, programs, kernels and launches. C11. */
#ifndef PARITY_OCL_CHECK_H
#define PARITY_OCL_CHECK_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl_icd.h>
#include <stddef.h>

#include "check.h"

/* the executor's words for OpenCL (check.h's chk_words): reports, settings and the counters file */
#define OCL_CHK_WORDS                                                                             \
  ((chk_words_t){"opencl-check", "work-group", "work-groups", "work-item", "work-items", "local", \
                 "PARITY_OPENCL_CHECK_SEED", "PARITY_OPENCL_CHECK_SWITCH", "OPENCL_CHECK_STATS"})

#define OCL_CHK_MAX_ARGS 32
#define OCL_CHK_ARG_BYTES 1024 /* the largest by-value argument (kp_iter_cl_t: 528 bytes) */
#define OCL_CHK_WG 256         /* CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_KERNEL_WORK_GROUP_SIZE */

extern struct _cl_icd_dispatch ocl_chk_dispatch;

struct _cl_platform_id {
  const struct _cl_icd_dispatch *dispatch;
};
struct _cl_device_id {
  const struct _cl_icd_dispatch *dispatch;
};
struct _cl_context {
  const struct _cl_icd_dispatch *dispatch;
  unsigned magic, refs;
};
struct _cl_command_queue {
  const struct _cl_icd_dispatch *dispatch;
  unsigned magic, refs;
  cl_context ctx;
};
struct _cl_mem {
  const struct _cl_icd_dispatch *dispatch;
  unsigned magic, refs;
  cl_context ctx;
  void *ptr; /* in the executor's arena (chk_mem_alloc) */
  size_t size;
};
struct _cl_program {
  const struct _cl_icd_dispatch *dispatch;
  unsigned magic, refs;
  cl_context ctx;
  int built;                      /* clBuildProgram succeeded */
  int fam, cls;                   /* the family of its kernels, OCL_CLASS */
  int contig, lib_div, fp64, fma; /* OCL_CONTIG, OCL_LIB_DIV, HAS_FP64, HAS_FMA (-1: not defined) */
  int spec[3];                    /* SPEC_OP, SPEC_DT, SPEC_DT2 (0: not fixed) */
  unsigned char *want;            /* K_<kernel> of the prelude, per kp_kernels.h id */
  char log[512];                  /* CL_PROGRAM_BUILD_LOG */
};
struct _cl_kernel {
  const struct _cl_icd_dispatch *dispatch;
  unsigned magic, refs;
  cl_program prog;
  const chk_kernel_t *k;
  unsigned set;        /* bit i: argument i was set */
  unsigned char *args; /* nargs slots of OCL_CHK_ARG_BYTES, 16-byte aligned */
};

enum { OCL_MAGIC_CTX = 0x0c7c7c01, OCL_MAGIC_QUEUE, OCL_MAGIC_MEM, OCL_MAGIC_PROG, OCL_MAGIC_KERNEL };

extern struct _cl_platform_id ocl_chk_platform;
extern struct _cl_device_id ocl_chk_device;
extern int ocl_chk_spec[3];
extern int ocl_chk_fp32_only; /* the device is gpu-fp32 (PARITY_OPENCL_CHECK_DEVICE): no float64 */
void ocl_chk_say(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* "opencl-check: ..." on stderr */
cl_int ocl_chk_configure(void); /* the seed and switch settings, once; CL_SUCCESS or why not */
/* copy a query's answer (clGet*Info's rules) */
cl_int ocl_chk_answer(const void *v, size_t n, size_t size, void *out, size_t *size_ret);

/* ocl_objects.c: the entries the dispatch table holds */
cl_mem CL_API_CALL ocl_chk_create_buffer(cl_context, cl_mem_flags, size_t, void *, cl_int *);
cl_int CL_API_CALL ocl_chk_retain_mem(cl_mem);
cl_int CL_API_CALL ocl_chk_release_mem(cl_mem);
cl_int CL_API_CALL ocl_chk_read(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *,
                                cl_event *);
cl_int CL_API_CALL ocl_chk_write(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                                 const cl_event *, cl_event *);
/* run the non-blocking writes the queue holds (clFinish, a queue's release, every command first):
 * CL_OUT_OF_RESOURCES, said on stderr, when a write's source changed since it was enqueued */
cl_int ocl_chk_drain(void);
cl_int CL_API_CALL ocl_chk_copy(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event *,
                                cl_event *);
cl_int CL_API_CALL ocl_chk_fill(cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint,
                                const cl_event *, cl_event *);
cl_program CL_API_CALL ocl_chk_program_source(cl_context, cl_uint, const char **, const size_t *, cl_int *);
cl_program CL_API_CALL ocl_chk_program_binary(cl_context, cl_uint, const cl_device_id *, const size_t *,
                                              const unsigned char **, cl_int *, cl_int *);
cl_int CL_API_CALL ocl_chk_build(cl_program, cl_uint, const cl_device_id *, const char *,
                                 void(CL_CALLBACK *)(cl_program, void *), void *);
cl_int CL_API_CALL ocl_chk_program_info(cl_program, cl_program_info, size_t, void *, size_t *);
cl_int CL_API_CALL ocl_chk_build_info(cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *);
cl_int CL_API_CALL ocl_chk_retain_program(cl_program);
cl_int CL_API_CALL ocl_chk_release_program(cl_program);
cl_kernel CL_API_CALL ocl_chk_create_kernel(cl_program, const char *, cl_int *);
cl_int CL_API_CALL ocl_chk_set_arg(cl_kernel, cl_uint, size_t, const void *);
cl_int CL_API_CALL ocl_chk_wg_info(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *);
cl_int CL_API_CALL ocl_chk_retain_kernel(cl_kernel);
cl_int CL_API_CALL ocl_chk_release_kernel(cl_kernel);
cl_int CL_API_CALL ocl_chk_ndrange(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,
                                   cl_uint, const cl_event *, cl_event *);

#endif
