/* fault_plugin.c — entry point, device info and the wrapped function table of the fault plugin
 * (see fault.h). Plugin name and backend "fault"; device info is the CPU plugin's, type CPU. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "parity_support/negotiate.h"

fault_t fault_active = FAULT_NONE;
const parity_plugin_api_t *fault_cpu;
static parity_plugin_api_t fault_api;
static const char *fault_name = "none";
static char fault_unknown[160];

static int32_t fault_init(void) {
  if (fault_unknown[0])
    return psup_report(cpu_host, PARITY_STATUS_UNAVAILABLE, "fault: unknown PARITY_FAULT '%s'", fault_unknown);
  return fault_cpu->init();
}

static void fault_shutdown(void) {
  fault_forget();
  fault_cpu->shutdown();
}

static int32_t fault_device_info(uint32_t index, parity_device_info_t *out) {
  int32_t st = fault_cpu->get_device_info(index, out);
  if (st != PARITY_STATUS_OK) return st;
  if (PARITY_HAS_FIELD(out, parity_device_info_t, name)) {
    char inner[sizeof out->name];
    snprintf(inner, sizeof inner, "%s", out->name);
    snprintf(out->name, sizeof out->name, "fault %s over %.96s", fault_name, inner);
  }
  if (PARITY_HAS_FIELD(out, parity_device_info_t, type)) out->type = PARITY_DEVICE_TYPE_CPU;
  if (PARITY_HAS_FIELD(out, parity_device_info_t, flags) && fault_active == FAULT_FALSE_F64)
    out->flags |= PARITY_DEVICE_FLAG_FLOAT64;
  if (fault_active == FAULT_REFUSE_ALL) { /* an honest plugin that runs nothing yet */
    if (PARITY_HAS_FIELD(out, parity_device_info_t, dtype_mask)) out->dtype_mask = 0;
    if (PARITY_HAS_FIELD(out, parity_device_info_t, flags)) out->flags &= ~PARITY_DEVICE_FLAG_FLOAT64;
  }
  return PARITY_STATUS_OK;
}

static int has_f64(const parity_op_desc_t *d) {
  for (uint32_t i = 0; i < d->num_inputs && i < PARITY_MAX_INPUTS; i++)
    if (d->inputs[i] && d->inputs[i]->dtype == PARITY_DTYPE_F64) return 1;
  for (uint32_t i = 0; i < d->num_outputs && i < PARITY_MAX_OUTPUTS; i++)
    if (d->outputs[i] && d->outputs[i]->dtype == PARITY_DTYPE_F64) return 1;
  return 0;
}

/* lie-dtypes: the out-of-tree plugin of the issue, f32 add, mul and sum, claiming every dtype. */
static int only_f32_add_mul_sum(const parity_op_desc_t *d) {
  if (d->op != PARITY_OP_ADD && d->op != PARITY_OP_MUL && d->op != PARITY_OP_SUM) return 0;
  for (uint32_t i = 0; i < d->num_inputs && i < PARITY_MAX_INPUTS; i++)
    if (d->inputs[i] && d->inputs[i]->dtype != PARITY_DTYPE_F32) return 0;
  for (uint32_t i = 0; i < d->num_outputs && i < PARITY_MAX_OUTPUTS; i++)
    if (d->outputs[i] && d->outputs[i]->dtype != PARITY_DTYPE_F32) return 0;
  return 1;
}

static int32_t fault_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_REFUSE_ALL || fault_active == FAULT_REFUSE_ALL_CLAIMS)
    return psup_report(cpu_host, PARITY_STATUS_UNSUPPORTED, "fault: %s supports no op yet", fault_name);
  if (fault_active == FAULT_LIE_DTYPES && d && d->struct_size >= sizeof *d && !only_f32_add_mul_sum(d))
    return psup_report(cpu_host, PARITY_STATUS_UNSUPPORTED, "fault: lie-dtypes runs f32 add, mul and sum only");
  if (fault_active == FAULT_FALSE_F64 && d && d->struct_size >= sizeof *d && has_f64(d)) {
    parity_op_desc_t d32;
    parity_tensor_desc_t t[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
    fault_retype_f64(d, &d32, t);
    return fault_cpu->supports(dev, &d32);
  }
  return fault_cpu->supports(dev, d);
}

static uint64_t buffer_size(const parity_plugin_buffer_t *b) { return b ? b->size : 0; }

/* What the CPU entries check before running: the descriptor, its extents, supports(). */
static int32_t accept(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  char msg[512];
  int32_t st = psup_check_op_desc(d, 1, msg, sizeof msg);
  if (st == PARITY_STATUS_OK) st = psup_check_extents(d, buffer_size, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return psup_report(cpu_host, st, "fault: %s", msg);
  return fault_cpu->supports(dev, d);
}

static int is_float(const parity_tensor_desc_t *t) { return t && psup_dtype_is_float(t->dtype); }

/* nan-sign-flips: on every other call, the NaN outputs change sign (the sign of a NaN is left
 * open: the suite must accept it); nan-sign-unwritten: also restores the last element of an f16
 * output to the bytes it had before the call (the suite's sentinel, which reads as a NaN in f16:
 * an unwritten element must still fail). */
static int32_t fault_nan_sign(const parity_op_desc_t *d) {
  static unsigned calls;
  const parity_tensor_desc_t *y = d->outputs[0];
  int64_t n = psup_numel(y);
  if (!y || n == 0 || (y->dtype != PARITY_DTYPE_F32 && y->dtype != PARITY_DTYPE_F64 && y->dtype != PARITY_DTYPE_F16))
    return PARITY_STATUS_OK;
  if (calls++ & 1)
    for (int64_t i = 0; i < n; i++) {
      double v = fault_load(y, i);
      if (isnan(v)) fault_store(y, i, -v);
    }
  return PARITY_STATUS_OK;
}

/* the output is input 1's own view (a binary op run in place into its second operand) */
static int fault_in_place_b(const parity_op_desc_t *d) {
  const parity_tensor_desc_t *b = d->num_inputs > 1 ? d->inputs[1] : NULL, *c = d->outputs[0];
  return b && c && b->buffer == c->buffer && b->offset_bytes == c->offset_bytes;
}

static int32_t ew_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_INDUCTOR_RECOMPUTE) fault_inductor_other_forward();
  int32_t kind = psup_op_info(d->op) ? psup_op_info(d->op)->kind : 0;
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->elementwise_forward, dev, d);
  if (fault_active == FAULT_COMPARE_EPS && kind == PARITY_OP_KIND_COMPARE && is_float(d->inputs[0])) {
    int32_t st = accept(dev, d);
    return st != PARITY_STATUS_OK ? st : fault_compare_eps(d);
  }
  parity_op_desc_t dense_desc;
  parity_tensor_desc_t dense;
  if (fault_mutant_dense_view(d, &dense_desc, &dense)) return fault_cpu->elementwise_forward(dev, &dense_desc);
  if (fault_active == FAULT_INPLACE_COPY_FIRST && kind == PARITY_OP_KIND_BINARY && fault_in_place_b(d)) {
    int32_t st = accept(dev, d); /* c = a first, then c op= b: b, which c is, already holds a */
    for (int64_t i = 0; st == PARITY_STATUS_OK && i < psup_numel(d->outputs[0]); i++)
      fault_store(d->outputs[0], i, fault_load(d->inputs[0], i));
    parity_op_desc_t then = *d;
    then.inputs[0] = d->outputs[0];
    return st != PARITY_STATUS_OK ? st : fault_cpu->elementwise_forward(dev, &then);
  }
  const parity_tensor_desc_t *y = d->outputs[0];
  unsigned char *last = NULL, keep[2];
  if (fault_active == FAULT_NAN_SIGN_UNWRITTEN && d->op == PARITY_OP_ADD && y && y->dtype == PARITY_DTYPE_F16 &&
      psup_numel(y) > 0)
    last = fault_element(y, psup_numel(y) - 1), memcpy(keep, last, 2);
  int32_t st = fault_cpu->elementwise_forward(dev, d);
  if (st != PARITY_STATUS_OK) return st;
  if (last) memcpy(last, keep, 2);
  st = fault_mutant_elementwise(d);
  if (st != PARITY_STATUS_OK) return st;
  if (fault_active == FAULT_WRITE_PAST_END) return fault_write_past_end(d);
  if (fault_active == FAULT_NAN_SIGN_FLIPS || fault_active == FAULT_NAN_SIGN_UNWRITTEN) return fault_nan_sign(d);
  if (fault_active == FAULT_MAX_DROPS_NAN && d->op == PARITY_OP_MAXIMUM) return fault_max_drop_nan(d);
  return PARITY_STATUS_OK;
}

static int32_t ew_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->elementwise_backward, dev, d);
  int32_t st = fault_cpu->elementwise_backward(dev, d);
  if (st != PARITY_STATUS_OK) return st;
  st = fault_mutant_elementwise_backward(d);
  if (st != PARITY_STATUS_OK) return st;
  if (fault_active == FAULT_TIE_FIRST && (d->op == PARITY_OP_MAXIMUM || d->op == PARITY_OP_MINIMUM))
    return fault_tie_first_binary(d);
  if (fault_active == FAULT_RELU_GRAD_AT_ZERO && d->op == PARITY_OP_RELU) return fault_relu_grad(d);
  return PARITY_STATUS_OK;
}

static int32_t reduce_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_CRASH_SUM && d->op == PARITY_OP_SUM && d->inputs[0] &&
      d->inputs[0]->dtype == PARITY_DTYPE_F32) {
    raise(SIGSEGV); /* a driver that faults (a real signal, not UB a sanitizer would turn into an exit) */
    return PARITY_STATUS_INTERNAL;
  }
  if (fault_active == FAULT_INDUCTOR_RECOMPUTE) fault_inductor_other_forward();
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->reduce_forward, dev, d);
  int sum = d->op == PARITY_OP_SUM && is_float(d->inputs[0]);
  if (sum && fault_active >= FAULT_NAIVE_SUM && fault_active <= FAULT_BF16_TRUNCATE) {
    int32_t st = accept(dev, d);
    int handled = 0;
    if (st == PARITY_STATUS_OK) st = fault_mutant_reduce(d, &handled);
    if (st != PARITY_STATUS_OK || handled) return st;
  }
  if (sum && (fault_active == FAULT_SUM_F16 || fault_active == FAULT_NONDETERMINISTIC_REDUCE)) {
    int32_t st = accept(dev, d);
    return st != PARITY_STATUS_OK ? st : fault_sum(d, fault_active == FAULT_SUM_F16, fault_active != FAULT_SUM_F16);
  }
  int32_t st = fault_cpu->reduce_forward(dev, d);
  if (st == PARITY_STATUS_OK && fault_active == FAULT_MAX_DROPS_NAN && d->op == PARITY_OP_MAX)
    return fault_max_drop_nan(d);
  return st;
}

static int32_t reduce_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->reduce_backward, dev, d);
  int32_t st = fault_cpu->reduce_backward(dev, d);
  if (st == PARITY_STATUS_OK && fault_active == FAULT_TIE_FIRST && (d->op == PARITY_OP_MAX || d->op == PARITY_OP_MIN))
    return fault_tie_first_reduce(d);
  if (st == PARITY_STATUS_OK && fault_active == FAULT_SUM_GRAD_READS_X && d->op == PARITY_OP_SUM)
    return fault_sum_grad_reads_x(d);
  return st;
}

static int32_t matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_INDUCTOR_RECOMPUTE) fault_inductor_other_forward();
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->matmul_forward, dev, d);
  int32_t st = fault_cpu->matmul_forward(dev, d);
  return st != PARITY_STATUS_OK ? st : fault_mutant_matmul(d);
}

static int32_t matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->matmul_backward, dev, d);
  return fault_cpu->matmul_backward(dev, d);
}

/* conv-pad: shift the padding by one row (or column) so the output keeps its shape. */
static void shift_padding(parity_op_desc_t *d) {
  int32_t *p = d->params.conv2d.padding;
  if (p[1] > 0)
    p[0]++, p[1]--;
  else if (p[3] > 0)
    p[2]++, p[3]--;
  else
    p[0]++;
}

static int is_low(const parity_tensor_desc_t *t) {
  return t && (t->dtype == PARITY_DTYPE_F16 || t->dtype == PARITY_DTYPE_BF16);
}

static int32_t conv_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->conv2d_forward, dev, d);
  if (fault_active == FAULT_INDUCTOR_RECOMPUTE) {
    fault_inductor_other_forward();
    if (d->op == PARITY_OP_CONV2D && is_low(d->outputs[0])) {
      int32_t st = accept(dev, d);
      float *unrounded = NULL;
      if (st == PARITY_STATUS_OK)
        st = fault_via_f32_dtypes(fault_cpu->conv2d_forward, dev, d,
                                  PARITY_DTYPE_BIT(PARITY_DTYPE_F16) | PARITY_DTYPE_BIT(PARITY_DTYPE_BF16), &unrounded);
      if (st == PARITY_STATUS_OK) fault_inductor_conv_output(unrounded, psup_numel(d->outputs[0]));
      return st;
    }
  }
  if (fault_active == FAULT_CONV_PAD && d->op == PARITY_OP_CONV2D) {
    parity_op_desc_t shifted = *d;
    shift_padding(&shifted);
    return fault_cpu->conv2d_forward(dev, &shifted);
  }
  return fault_cpu->conv2d_forward(dev, d);
}

static int32_t conv_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->conv2d_backward, dev, d);
  if (fault_active == FAULT_CONV_PAD && d->op == PARITY_OP_CONV2D) {
    parity_op_desc_t shifted = *d;
    shift_padding(&shifted);
    return fault_cpu->conv2d_backward(dev, &shifted);
  }
  int32_t st = fault_cpu->conv2d_backward(dev, d);
  if (st == PARITY_STATUS_OK && fault_active == FAULT_TIE_FIRST && d->op == PARITY_OP_MAX_POOL2D)
    return fault_tie_first_pool(d);
  return st;
}

static int32_t softmax_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->softmax_forward, dev, d);
  int32_t st = fault_cpu->softmax_forward(dev, d);
  if (st == PARITY_STATUS_OK && fault_active == FAULT_SOFTMAX_BWD_UNROUNDED) return fault_softmax_remember(d);
  if (st == PARITY_STATUS_OK) st = fault_mutant_softmax(d);
  if (fault_active == FAULT_INDUCTOR_RECOMPUTE) {
    if (st == PARITY_STATUS_OK && d->op == PARITY_OP_LOG_SOFTMAX && is_low(d->inputs[0]))
      return fault_inductor_logsoftmax_forward(d);
    fault_inductor_other_forward();
  }
  return st;
}

static int32_t softmax_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (fault_active == FAULT_FALSE_F64 && has_f64(d)) return fault_via_f32(fault_cpu->softmax_backward, dev, d);
  if (fault_active == FAULT_SOFTMAX_BWD_UNROUNDED) {
    int32_t st = accept(dev, d);
    if (st != PARITY_STATUS_OK) return st;
    int handled = 0;
    st = fault_softmax_backward_unrounded(d, &handled);
    if (handled) return st;
  }
  if (fault_active == FAULT_INDUCTOR_RECOMPUTE && d->op == PARITY_OP_LOG_SOFTMAX && is_low(d->inputs[0])) {
    int32_t st = accept(dev, d);
    if (st != PARITY_STATUS_OK) return st;
    int handled = 0;
    st = fault_inductor_logsoftmax_backward(d, &handled);
    if (handled) return st;
  }
  return fault_cpu->softmax_backward(dev, d);
}

static const char *fault_names[] = {"none",
#define FAULT_X_(E, s) s,
                                    FAULT_LIST(FAULT_X_)
#undef FAULT_X_
};

/* read by the host without loading the plugin (abi/parity_plugin.h, "identity note") */
PARITY_PLUGIN_IDENTITY(fault_identity, "fault", "fault", "1.0.0-test");

PARITY_PLUGIN_EXPORT int32_t parity_plugin_query(uint32_t host_major, uint32_t host_minor,
                                                 const parity_host_api_t *host, parity_plugin_info_t *out) {
  (void)host_minor;
  int32_t st = psup_negotiate(host_major, out, fault_identity.name, fault_identity.backend, fault_identity.version);
  if (st != PARITY_STATUS_OK) return st;
  cpu_set_host(host);
  fault_cpu = cpu_plugin_api();
  const char *want = getenv("PARITY_FAULT");
  fault_active = FAULT_NONE;
  fault_unknown[0] = 0;
  if (want && want[0]) {
    for (size_t i = 1; i < sizeof fault_names / sizeof fault_names[0]; i++)
      if (!strcmp(want, fault_names[i])) fault_active = (fault_t)i;
    if (fault_active == FAULT_NONE) snprintf(fault_unknown, sizeof fault_unknown, "%s", want);
  }
  fault_name = fault_names[fault_active];
  fault_api = *fault_cpu;
  fault_api.init = fault_init;
  fault_api.shutdown = fault_shutdown;
  fault_api.get_device_info = fault_device_info;
  fault_api.supports = fault_supports;
  fault_api.elementwise_forward = ew_forward;
  fault_api.elementwise_backward = ew_backward;
  fault_api.reduce_forward = reduce_forward;
  fault_api.reduce_backward = reduce_backward;
  fault_api.conv2d_forward = conv_forward;
  fault_api.conv2d_backward = conv_backward;
  fault_api.softmax_forward = softmax_forward;
  fault_api.softmax_backward = softmax_backward;
  fault_api.matmul_forward = matmul_forward;
  fault_api.matmul_backward = matmul_backward;
  if (fault_active == FAULT_WRITE_READS_LATE) fault_late_write_install(&fault_api);
  out->api = &fault_api;
  return PARITY_STATUS_OK;
}
