/* cpu_plan.c — the CPU plugin's prepared plans (the ABI 1.1 plan entries). Each recorded
 * command becomes a step (cpu_internal.h) with everything derivable from its descriptor
 * derived once: the elementwise walk and row kernel, the reduction plan, the gemm problems, a
 * fill's destination. plan_run runs the steps in order on the calling thread, through the same
 * kernels the entries use, so a replay gives the bits of eager execution and allocates nothing
 * (the packing buffers are kept between calls). Families without a prepare (conv2d, pooling,
 * softmax) keep a copy of their descriptor and call their entry. */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "parity_support/buffer_args.h"

struct parity_plugin_plan_t {
  uint32_t count;
  cpu_step_t steps[]; /* in the plan's own allocation: one dependent load fewer per replay */
};

typedef struct fill_step {
  unsigned char *dst;
  uint64_t size;
  uint32_t psize;
  unsigned char pattern[8];
} fill_step;

static int32_t run_fill(const void *state) {
  const fill_step *f = state;
  psup_fill_repeat(f->dst, f->pattern, f->psize, f->size);
  return PARITY_STATUS_OK;
}

/* A family without a prepare: its entry, with the descriptor copied and repointed. */
typedef struct entry_step {
  parity_kernel_fn fn;
  parity_op_desc_t desc;
  parity_tensor_desc_t t[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
} entry_step;

static int32_t run_entry(const void *state) {
  const entry_step *e = state;
  return e->fn(NULL, &e->desc);
}

static int32_t prepare_fill(const parity_plan_command_t *c, cpu_step_t *step) {
  char msg[256];
  const parity_plugin_buffer_t *b = c->buffer;
  int32_t st =
      psup_check_buffer_range(b != NULL, b ? b->size : 0, c->offset_bytes, c->size_bytes, "plan fill", msg, sizeof msg);
  if (st == PARITY_STATUS_OK) st = psup_check_fill_pattern(c->pattern, c->pattern_size, c->size_bytes, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return cpu_fail(st, "cpu: plan_prepare: %s", msg);
  fill_step *f = malloc(sizeof *f);
  if (!f) return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: plan_prepare: out of host memory");
  f->dst = c->buffer->data + c->offset_bytes;
  f->size = c->size_bytes;
  f->psize = c->pattern_size;
  memcpy(f->pattern, c->pattern, sizeof f->pattern);
  step->run = run_fill;
  step->state = f;
  return PARITY_STATUS_OK;
}

static int32_t prepare_entry(const parity_op_desc_t *d, parity_kernel_fn fn, cpu_step_t *step) {
  entry_step *e = malloc(sizeof *e);
  if (!e) return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: plan_prepare: out of host memory");
  e->fn = fn;
  e->desc = *d;
  for (uint32_t i = 0; i < d->num_inputs && i < PARITY_MAX_INPUTS; i++)
    if (d->inputs[i]) e->t[i] = *d->inputs[i], e->desc.inputs[i] = &e->t[i];
  for (uint32_t i = 0; i < d->num_outputs && i < PARITY_MAX_OUTPUTS; i++)
    if (d->outputs[i]) e->t[PARITY_MAX_INPUTS + i] = *d->outputs[i], e->desc.outputs[i] = &e->t[PARITY_MAX_INPUTS + i];
  step->run = run_entry;
  step->state = e;
  return PARITY_STATUS_OK;
}

static int32_t prepare_kernel(const parity_op_desc_t *d, cpu_step_t *step) {
  char msg[512];
  const psup_op_info_t *info = psup_op_info(d->op);
  int32_t family = info ? psup_kind_family(info->kind) : -1;
  int32_t st = psup_check_kernel_entry(d, family, d->direction, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return cpu_fail(st, "cpu: plan_prepare: %s", msg);
  int fwd = d->direction == PARITY_DIRECTION_FORWARD;
  switch (family) {
    case PARITY_FAMILY_ELEMENTWISE: return cpu_elementwise_prepare(d, step);
    case PARITY_FAMILY_REDUCE: return cpu_reduce_prepare(d, step);
    case PARITY_FAMILY_MATMUL: return cpu_matmul_prepare(d, step);
    case PARITY_FAMILY_CONV2D: return prepare_entry(d, fwd ? cpu_conv2d_forward : cpu_conv2d_backward, step);
    case PARITY_FAMILY_SOFTMAX: return prepare_entry(d, fwd ? cpu_softmax_forward : cpu_softmax_backward, step);
    default: return cpu_fail(PARITY_STATUS_INVALID_ARGUMENT, "cpu: plan_prepare: op %d has no kernel family", d->op);
  }
}

int32_t cpu_plan_prepare(parity_plugin_device_t *dev, const parity_plan_command_t *cmds, uint32_t count,
                         parity_plugin_plan_t **out) {
  (void)dev;
  *out = NULL;
  parity_plugin_plan_t *p = calloc(1, sizeof *p + (size_t)count * sizeof(cpu_step_t));
  if (!p) return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: plan_prepare: out of host memory for %u steps", count);
  cpu_step_t *steps = p->steps;
  for (uint32_t i = 0; i < count; i++) {
    const parity_plan_command_t *c = &cmds[i];
    int32_t st;
    if (c->kind == PARITY_PLAN_COMMAND_FILL)
      st = prepare_fill(c, &steps[i]);
    else if (c->kind == PARITY_PLAN_COMMAND_KERNEL && c->op)
      st = prepare_kernel(c->op, &steps[i]);
    else
      st = cpu_fail(PARITY_STATUS_INVALID_ARGUMENT, "cpu: plan_prepare: command %u has kind %d%s", i, c->kind,
                    c->kind == PARITY_PLAN_COMMAND_KERNEL ? " and no descriptor" : " (kernel 1 or fill 2)");
    if (st != PARITY_STATUS_OK) {
      cpu_plan_release(dev, p);
      return st;
    }
    p->count = i + 1;
  }
  *out = p;
  return PARITY_STATUS_OK;
}

int32_t cpu_plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {
  (void)dev;
  const cpu_step_t *s = p->steps, *end = s + p->count;
  for (; s < end; s++) {
    int32_t st = s->run(s->state);
    if (st != PARITY_STATUS_OK) return st;
  }
  /* A prepared plan is replayed again and again, and a step's own data has by now evicted its
   * state from L1: fetch the first step's state for the next replay now, beside the host's
   * fetch of its plan, rather than as the last link of a chain of dependent loads then. */
  if (p->count) __builtin_prefetch(p->steps[0].state);
  return PARITY_STATUS_OK;
}

void cpu_plan_release(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {
  (void)dev;
  if (!p) return;
  for (uint32_t i = 0; i < p->count; i++) free(p->steps[i].state);
  free(p);
}
