/* softmax_internal.h — the softmax family's plan, shared by softmax.c (validation, planning,
 * dispatch) and the per-path row kernels of softmax_kernels.c (stamped from softmax_tmpl.h). */
#ifndef PARITY_CPU_SOFTMAX_INTERNAL_H
#define PARITY_CPU_SOFTMAX_INTERNAL_H

#include "cpu_internal.h"

enum { SM_NT = 3 }; /* iterator slots: forward x, -, y; backward y, dy, dx */

typedef struct sm_plan {
  int logsm;
  int64_t n;        /* row length (the softmax axis) */
  int64_t s[SM_NT]; /* strides along the axis */
  int64_t rows;     /* product of the other axes */
  uint32_t no;      /* other axes of size > 1 */
  int64_t oshape[PARITY_MAX_RANK];
  int64_t os[SM_NT][PARITY_MAX_RANK];
  int threads;
} sm_plan;

/* One path's row runners (cpu_isa.h): every row of the plan, forward or backward; a, b are
 * x (forward) or y, dy (backward), out is y or dx. softmax.c reaches them through
 * cpu_kernels(). */
#ifdef CPU_ISA
#include "cpu_isa.h"
int32_t CPU_ISA_FN(sm_run_f64)(const sm_plan *p, const void *a, const void *b, void *out, int backward);
int32_t CPU_ISA_FN(sm_run_f32)(const sm_plan *p, const void *a, const void *b, void *out, int backward);
int32_t CPU_ISA_FN(sm_run_f16)(const sm_plan *p, const void *a, const void *b, void *out, int backward);
int32_t CPU_ISA_FN(sm_run_bf16)(const sm_plan *p, const void *a, const void *b, void *out, int backward);
#endif

#endif
