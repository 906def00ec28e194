/* conform.h — the pieces of parity-conform: case tables (cases_*.c), input values (values.c),
 * host copies of operands (operands.c), guarded device execution (exec.c), the comparison rule
 * (compare.c), the per-case runner and its oracle (runner.c, oracle.c), the finite-difference
 * check (fd.c), capability checks (capability.c), named hazard cases (hazard_*.c), what a run
 * covered and its verdict (coverage.c), the console (console.c), `--support` (support_list.c)
 * and report files (report.c: JSON and Markdown; junit.c; html.c).
 *
 * Vocabulary
 *   device  the backend under test;  oracle  the CPU plugin computing in float64.
 *   spec    how one operand looks to the device: dtype, logical shape, broadcast axes, layout.
 *   host    a host copy of an operand's values; broadcast axes are stored once (size 1).
 * Ownership: every function that fills a cf_host_t allocates its data; cf_host_free releases it.
 */
#ifndef PARITY_CONFORM_H
#define PARITY_CONFORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parity/device.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/ops.h"

/* ---- operands ---------------------------------------------------------------------------- */
/* Memory layouts of an operand. Every layout places the tensor after guard bytes (unless
 * PARITY_CONFORM_PLACEMENT=start: cf_placement_configure), so every
 * tensor the suite hands a device has a non-zero byte offset. */
typedef enum cf_layout_t {
  CF_LAYOUT_CONTIG = 0, /* row-major */
  CF_LAYOUT_TRANSPOSED, /* the last two axes swapped in memory */
  CF_LAYOUT_STEP,       /* every other element of the last axis (a slice with step 2) */
  CF_LAYOUT_REVERSED,   /* last axis with a negative stride (inputs only) */
  CF_LAYOUT_MISALIGNED  /* row-major, one element off the guard's 64-byte alignment */
} cf_layout_t;

typedef struct cf_spec_t {
  int32_t dtype;
  uint32_t rank;
  int64_t shape[PARITY_MAX_RANK]; /* logical shape */
  uint32_t bcast;                 /* bit a: axis a has stride 0 (inputs only) */
  int32_t layout;                 /* cf_layout_t */
} cf_spec_t;

typedef struct cf_host_t {
  cf_spec_t spec;
  int64_t count;       /* stored elements: product of the shape with broadcast axes at 1 */
  unsigned char *data; /* count elements of spec.dtype, row-major */
} cf_host_t;

int64_t cf_spec_numel(const cf_spec_t *s);  /* logical elements */
int64_t cf_spec_stored(const cf_spec_t *s); /* stored elements */
cf_spec_t cf_spec_make(int32_t dtype, uint32_t rank, const int64_t *shape);
int cf_host_alloc(cf_host_t *h, const cf_spec_t *spec);
int cf_host_alloc_unset(cf_host_t *h, const cf_spec_t *spec); /* data left unset: the caller writes it all */
void cf_host_free(cf_host_t *h);
double cf_host_get(const cf_host_t *h, int64_t i); /* stored element i widened to double */
void cf_host_set(cf_host_t *h, int64_t i, double v);
/* Copy of src in `dtype` (values converted with psup_store_f64; bool and integer sources that
 * keep their dtype are copied bytewise), contiguous layout, same broadcast; absval takes |v|. */
int cf_host_convert(const cf_host_t *src, int32_t dtype, int absval, cf_host_t *dst);
/* Logical (broadcast-expanded) copy: a host with bcast 0 holding every logical element. */
int cf_host_expand(const cf_host_t *src, cf_host_t *dst);
/* Row-major strides of the stored shape, 0 on broadcast axes: logical index -> stored index. */
void cf_spec_stored_strides(const cf_spec_t *s, int64_t *st);

/* ---- running an op on a device ------------------------------------------------------------ */
typedef enum cf_exec_status_t {
  CF_EXEC_OK = 0,
  CF_EXEC_UNSUPPORTED, /* supports() said no */
  CF_EXEC_ERROR,       /* the run (or an allocation, write, read) failed */
  CF_EXEC_CORRUPT      /* bytes outside the outputs' elements changed: guard, gap or input */
} cf_exec_status_t;

typedef struct cf_op_t {
  int32_t op, direction;
  parity_op_params_t params;
  uint32_t nin, nout;
  const cf_host_t *in[PARITY_MAX_INPUTS];   /* NULL: absent operand */
  const cf_spec_t *out[PARITY_MAX_OUTPUTS]; /* NULL: output not requested */
  uint32_t in_place; /* 0, or k + 1: output 0 is input k's own view, in its buffer (an elementwise
                        forward run in place, as the ABI allows; out[0] is then in[k]'s spec) */
} cf_op_t;

/* Read PARITY_CONFORM_PLACEMENT (exec.c): 0 guard bytes on both sides of every tensor (guarded,
 * the default), 1 none after it (end), 2 none before it (start); -1 with the reason in msg for a
 * value that is none of these. */
int cf_placement_configure(char *msg, size_t n);
/* Bytes of the guarded buffer the suite allocates for operand `slot` (inputs first, then outputs)
 * of this spec. */
uint64_t cf_spec_buffer_bytes(const cf_spec_t *s, uint32_t slot);
/* Ask supports() with the descriptors the run would use (buffers NULL). */
cf_exec_status_t cf_supports(parity_device_t *dev, const cf_op_t *op, char *msg, size_t msg_size);
/* Allocate guarded buffers, write inputs, fill outputs with `sentinel`, run, read back, check
 * every byte that is not an output element. outputs[i] receives logical row-major values
 * (left empty for absent outputs). */
cf_exec_status_t cf_exec(parity_device_t *dev, const cf_op_t *op, uint8_t sentinel, cf_host_t *outputs, char *msg,
                         size_t msg_size);

/* ---- cases -------------------------------------------------------------------------------- */
typedef enum cf_values_t {
  CF_VALUES_NORMAL = 0, /* random, mixed magnitudes, inside the op's domain */
  CF_VALUES_SPECIAL,    /* ±0, ±inf, NaN, denormals, huge and tiny (forward only) */
  CF_VALUES_TIES,       /* few distinct values: ties, zeros, rounding ties, kinks */
  CF_VALUES_MASK,       /* compare: [0,1,2,...] against 1 */
  CF_VALUES_OFFSET1000, /* softmax: logits + 1000 in even rows, - 1000 in odd ones */
  CF_VALUES_OFFSET1E8,  /* softmax: logits + 1e8 */
  CF_VALUES_WIDE,       /* softmax: logits spread over [-12, 12] */
  CF_VALUES_ONEHOT,     /* gradients: one 1 per softmax row, zeros elsewhere */
  CF_VALUES_ONES,       /* gradients: all 1 (d sum(softmax(x)) / dx cancels to almost 0) */
  CF_VALUES_POSITIVE,   /* accumulating ops: all in [0.5, 1), so S = |ref| and the bound is tight */
  CF_VALUES_SPIKES,     /* mostly +0 with 1s at the start, middle, end and either side of every
                           multiple of 256 (work-group and chunk boundaries): every partial of 256
                           or more aligned elements holds spikes, so dropping one shows */
  CF_VALUES_NEGZERO,    /* every element -0: a sum must be -0 */
  CF_VALUES_EDGE,       /* each op's edges in the dtype: exp/sigmoid over- and underflow, tanh and
                           gelu at +-110 and tiny, log near 0, pow at a = 0 and b = 0, powers of two
                           from the smallest subnormal to the largest finite */
  CF_VALUES_FAR,        /* softmax: rows whose logits are far apart (scales 1 .. 1e30) */
  CF_VALUES_SPLIT_TIES, /* reduce over the last axis (rank 2): each row's maximum and minimum (and in
                           floating rows NaN) repeated at positions a third of the row apart, so
                           with more than 4096 terms the ties fall in different partials of a GPU
                           reduction: the first index must win */
  CF_VALUES_NAN,        /* reduce over the last axis (rank 2): NaN in a row, two NaNs (one negative),
                           NaN beside +-inf and beside tied maxima, an all-NaN row, a row of ties
                           without NaN: max/min backward where the result is NaN; rows whose
                           extreme is +0 beside -0 (max) or -0 beside +0 (min) */
  CF_VALUES_NANINF,     /* softmax: rows holding NaN with +inf, NaN with +inf and -inf, -NaN with
                           two +inf, +inf with -inf, and one ordinary row */
  CF_VALUES_NEGINF      /* -inf but every 7th element (ordinary values): pooling windows of -inf
                           only, whose max is -inf (the max's start is -inf, not the lowest finite) */
} cf_values_t;

typedef enum cf_mode_t {
  CF_MODE_COMPARE = 0, /* run on the device and the oracle, compare */
  CF_MODE_FD           /* f64 backward against central finite differences of the forward */
} cf_mode_t;

typedef struct cf_case_t {
  char id[112]; /* "<op>.<dtype>.<direction>.<variant>", unique */
  char variant[40];
  char dtype_label[16]; /* "f32", or "f32->f16" for casts */
  int32_t op, kind;
  uint32_t op_flags;
  int32_t dtype;     /* dtype under test (floating inputs) */
  int32_t out_dtype; /* forward output dtype */
  int32_t direction;
  int32_t mode;                      /* cf_mode_t */
  uint32_t nin, nout;                /* forward operand counts */
  int has_in[PARITY_MAX_INPUTS];     /* conv2d bias may be absent */
  cf_spec_t in[PARITY_MAX_INPUTS];   /* forward inputs */
  cf_spec_t out[PARITY_MAX_OUTPUTS]; /* forward outputs */
  parity_op_params_t params;
  int32_t values, dy_values; /* cf_values_t */
  int32_t dy_layout; /* backward: the incoming gradient's layout (cf_layout_t; contiguous unless a variant sets it) */
  int expect_error;  /* the forward must be refused (max over an empty axis) */
  uint32_t in_place; /* forward in place: 0, or k + 1 when output 0 is input k's view (cf_op_t) */
  int full_only;     /* only with --full */
} cf_case_t;

typedef struct cf_case_list_t {
  cf_case_t *items;
  size_t count, cap;
} cf_case_list_t;

/* Every case, default subset and --full ones alike, generated from abi/parity_ops.def; with
 * keep_op, only the cases of the ops it keeps (a case's values depend on its id alone, so they are
 * the same either way). The whole table is about 9,200 cases of 1 KB: building it costs a
 * narrowly filtered run most of its start-up, twice under a sanitizer's allocator. */
int cf_cases_build(cf_case_list_t *list, int (*keep_op)(int32_t op, const void *ctx), const void *ctx);
void cf_cases_free(cf_case_list_t *list);
/* --shard K/N (shares.c): keep in `selected` only share K of N of the cases it marks, the shares
 * dealt by estimated work (cf_case_cost: stored elements, outputs weighed more, plus a fixed cost per case), largest
 * first, each to the share with the least so far. -1 when out of memory. */
double cf_case_cost(const cf_case_t *c);
int cf_cases_keep_share(const cf_case_list_t *cases, unsigned char *selected, uint32_t share, uint32_t shares);
/* Per-kind builders (cases_*.c) append to the list; they return -1 on out-of-memory. */
cf_case_t *cf_case_push(cf_case_list_t *list);
int cf_cases_elementwise(cf_case_list_t *list, int32_t op, int32_t kind, uint32_t flags);
int cf_cases_reduce(cf_case_list_t *list, int32_t op, uint32_t flags);
int cf_cases_nn(cf_case_list_t *list, int32_t op, int32_t kind, uint32_t flags);
/* Fill id, variant and labels once op, dtypes, direction are set. */
void cf_case_name(cf_case_t *c, const char *variant);
/* 1 for dtypes a kind is tested in (floating only for PARITY_OPF_FLOAT ops, bool for
 * comparisons, selection and casts). */
int cf_dtype_applies(int32_t kind, uint32_t flags, int32_t dtype);

/* ---- values ------------------------------------------------------------------------------- */
typedef struct cf_values_ctx_t {
  uint64_t seed;
  int no_denormals; /* the device declares flushed denormals: generate none */
} cf_values_ctx_t;

uint64_t cf_hash(const char *s, uint64_t seed);
uint64_t cf_mix(uint64_t key, uint64_t counter); /* counter-based: splitmix64 of key + counter */
double cf_unit(uint64_t bits);                   /* [0, 1) from the top 53 bits */
/* Fill `h` (already allocated) for operand `slot` of case `c`; `stream` separates the operands
 * and uses of one case (inputs, gradients, directions). Values are rounded to h's dtype. */
void cf_values_fill(const cf_values_ctx_t *vc, const cf_case_t *c, int slot, int32_t values, uint64_t stream,
                    cf_host_t *h);

/* ---- results ------------------------------------------------------------------------------ */
typedef enum cf_status_t { CF_PASS = 0, CF_FAIL, CF_UNSUPPORTED, CF_SKIPPED } cf_status_t;

const char *cf_status_name(int32_t status);

/* Error distribution of a case: how many compared elements fell in each band of error/bound.
 * Bin 0: exact (ratio 0); 1: below 1e-7; k = 2..13: [10^(k-9), 10^(k-8)); 14: 1e5 and more;
 * 15: an exact mismatch or NaN where a number was due. Bins 9 and up are failures. */
enum { CF_HIST_BINS = 16, CF_HIST_FIRST_BAD = 9 };
int cf_hist_bin(double ratio);
const char *cf_hist_label(int bin);

typedef struct cf_result_t {
  char backend[64]; /* plugin name */
  char device[128];
  char id[112], op[32], dtype[16], direction[12], variant[40];
  int is_case;             /* a row of the case table (not a capability or hazard check) */
  int refusal;             /* is_case: a case that passes by being refused (cf_case_t.expect_error):
                             * it shows no computation, so it covers no op or dtype */
  int32_t op_id, dtype_id; /* is_case: the op and the dtype under test (a cast's source) */
  int32_t status;
  double worst_ratio;        /* error / bound; NAN when not applicable, INFINITY for an exact mismatch */
  double max_ulp;            /* NAN when the rule is not in ULPs */
  double cosine, norm_ratio; /* backward cases; NAN otherwise */
  double seconds;
  int full_only;
  char message[640];
  char operands[512];          /* failures: every operand's dtype, shape, strides, offset, broadcast */
  uint32_t hist[CF_HIST_BINS]; /* compared elements per error/bound band */
} cf_result_t;

void cf_result_init(cf_result_t *r, const char *id, const char *op, const char *dtype, const char *direction,
                    const char *variant);
/* Append text to r->message (separated by "; "). */
void cf_result_note(cf_result_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cf_result_fail(cf_result_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- comparison --------------------------------------------------------------------------- */
typedef enum cf_rule_t { CF_RULE_EXACT = 0, CF_RULE_ULP, CF_RULE_ACCUM } cf_rule_t;

cf_rule_t cf_rule_for(int32_t op, int32_t kind, int32_t dtype, int32_t direction);

typedef struct cf_compare_t {
  int32_t rule, dtype; /* rule and the dtype of the values compared */
  double ulp_bound;    /* CF_RULE_ULP */
  int64_t k;           /* CF_RULE_ACCUM: terms per output element */
  int flushes;         /* the device declares flushed denormals */
  int32_t op;
  int zero_sign;     /* CF_RULE_ACCUM: an exact zero result must carry the oracle's sign (sums) */
  int store_rounded; /* CF_RULE_ACCUM in f16/bf16: the result must be a correctly rounded store of
                          a value within the f32 accumulation bound (no truncating stores) */
  /* results, accumulated over calls */
  double worst_ratio, max_ulp;
  int64_t bad, checked;
  uint32_t hist[CF_HIST_BINS];
  char first_bad[320];
} cf_compare_t;

void cf_compare_init(cf_compare_t *cmp, int32_t rule, int32_t dtype, int32_t op, int64_t k, int flushes);
/* Compare got (device output) against ref (oracle output: f64 or the same dtype) and, for
 * CF_RULE_ACCUM, the absolute-value bound S (NULL: |ref|). `name` labels messages ("dx"). */
void cf_compare(cf_compare_t *cmp, const char *name, const cf_host_t *got, const cf_host_t *ref, const cf_host_t *S);
/* Cosine similarity and norm ratio ||got|| / ||ref|| over finite element pairs. */
void cf_cosine(const cf_host_t *got, const cf_host_t *ref, double *out_cos, double *out_ratio);
/* "x f32[5,7] strides (7,-1) at +64 B, broadcast axes {0}": operand `slot` (inputs first, then
 * outputs) as the device sees it. */
const char *cf_spec_describe(const char *name, const cf_spec_t *s, uint32_t slot, char *buf, size_t n);
/* "i,j,k" of logical element i of a spec. */
const char *cf_index_str(const cf_spec_t *s, int64_t i, char *buf, size_t n);

/* ---- the run ------------------------------------------------------------------------------ */
typedef struct cf_env_t {
  parity_context_t *ctx;
  parity_device_t *dev;    /* under test */
  parity_device_t *oracle; /* the CPU plugin; NULL when it is missing */
  parity_device_info_t info;
  const char *backend; /* plugin name of dev */
  cf_values_ctx_t values;
  int full;
  uint64_t max_buffer_cap;     /* capability check: largest allocation tried */
  uint32_t device_index;       /* of dev within its plugin */
  const cf_case_list_t *cases; /* every case (default and --full): capability checks ask supports() */
} cf_env_t;

/* supports() for case c in its direction (backward: the forward and the backward descriptor),
 * with the descriptors the run would use; msg receives the plugin's reason. */
cf_exec_status_t cf_case_supports(cf_env_t *env, const cf_case_t *c, char *msg, size_t msg_size);
/* One line after the verdict: which of the autodiff core's own f32 needs the device does not meet. */
void cf_print_core_needs(cf_env_t *env);
/* One operand line per input and output of case c's forward op, for failure reports. */
void cf_case_operands(const cf_case_t *c, char *buf, size_t n);

void cf_run_case(cf_env_t *env, const cf_case_t *c, cf_result_t *r);
void cf_run_fd(cf_env_t *env, const cf_case_t *c, cf_result_t *r);
/* The forward input that backward output `slot` is the gradient of (-1: none). */
int cf_grad_input(int32_t kind, uint32_t slot);
/* The backward op of case c from forward inputs x, the stored forward output y and dy; grads
 * receives the gradient specs (no broadcast, no negative strides). */
void cf_backward_op(const cf_case_t *c, const cf_host_t *x, const cf_host_t *y, const cf_host_t *dy, cf_spec_t *grads,
                    cf_op_t *op);
/* Run op on the device with the runner's sentinel; 1 when outputs were produced (a guard
 * failure is recorded in r and still counts), 0 when the run failed or is unsupported. */
int cf_device_run(cf_env_t *env, const cf_op_t *op, int second, cf_host_t *out, cf_result_t *r, const char *what);

/* Oracle helpers (oracle.c). The oracle dtype of a device dtype: f64 for floating dtypes,
 * unchanged for integers and bool (their ops are exact; the CPU plugin is the reference). */
int32_t cf_oracle_dtype(int32_t dtype);
/* Convert every present input to the oracle dtype (absval: |x|) with contiguous layout. */
int cf_oracle_inputs(const cf_op_t *op, int absval, cf_host_t *conv, cf_op_t *out_op, cf_spec_t *out_specs,
                     int force_f64_outputs);
/* S for softmax and log_softmax (forward from x, backward from y and dy), as an
 * absolute-value evaluation of the same computation. */
void cf_softmax_abs_bound(int32_t op, int32_t direction, int32_t axis, const cf_host_t *a, const cf_host_t *b,
                          const cf_host_t *ref, cf_host_t *S);
/* Terms accumulated per output element of output `slot`. */
int64_t cf_terms(const cf_case_t *c, int direction, int slot);

/* ---- capability checks and hazards ------------------------------------------------------- */
typedef void (*cf_check_fn)(cf_env_t *env, cf_result_t *r);
typedef struct cf_check_t {
  const char *id; /* "cap.float64", "hazard.mask-under-gradient" */
  const char *op; /* what it exercises, for the op column */
  cf_check_fn fn;
} cf_check_t;

extern const cf_check_t cf_capability_checks[];
/* `parity-conform --determinism-probe`: the hashes of cap.determinism's reductions on env's device,
 * one line per probe, for the check's run under another launch configuration. */
void cf_determinism_probe(cf_env_t *env, FILE *out);
extern const size_t cf_capability_check_count;
/* The named hazard cases (hazard_table.c), each in its own hazard_<name>.c. */
extern const cf_check_t cf_hazard_checks[];
extern const size_t cf_hazard_check_count;

/* A contiguous host tensor holding `values` (stored with psup_store_f64); for the checks. */
int cf_host_from_values(cf_host_t *h, int32_t dtype, uint32_t rank, const int64_t *shape, const double *values);
/* Run `op` with contiguous inputs on the device, check guards, read outputs as doubles. Fills r
 * (FAIL / UNSUPPORTED) and returns 0 when it could not; outputs are freed by the caller. */
int cf_check_run(parity_device_t *dev, const cf_op_t *op, cf_host_t *outputs, cf_result_t *r, const char *what);

/* ---- report ------------------------------------------------------------------------------- */
typedef struct cf_backend_summary_t {
  char backend[64], device[128], type[32];
  size_t first, count; /* range in the result list */
  size_t pass, fail, unsupported, skipped;
  double seconds;
  uint32_t dtype_mask, flags; /* what the device claims (parity_device_info_t) */
  char note[256];             /* e.g. "oracle missing" */
} cf_backend_summary_t;

typedef struct cf_report_t {
  cf_result_t *results;
  size_t count, cap;
  cf_backend_summary_t *backends;
  size_t backend_count, backend_cap;
  uint64_t seed;
  int full;
  char command[1024]; /* argv[0] and the environment prefix used in reproduce lines */
} cf_report_t;

cf_result_t *cf_report_add(cf_report_t *rep);
/* A new, zeroed backend summary at the end of rep->backends (NULL when out of memory). */
cf_backend_summary_t *cf_report_add_backend(cf_report_t *rep);
/* Count result r in b's pass/fail/unsupported/skipped and total. */
void cf_backend_count(cf_backend_summary_t *b, const cf_result_t *r);
void cf_report_free(cf_report_t *rep);
/* The exact command that reproduces one result alone. */
void cf_reproduce_command(const cf_report_t *rep, const cf_result_t *r, char *buf, size_t n);
int cf_write_json(const cf_report_t *rep, const char *path);
int cf_write_markdown(const cf_report_t *rep, const char *path);
int cf_write_junit(const cf_report_t *rep, const char *path);
int cf_write_html(const cf_report_t *rep, const char *path);

/* ---- coverage and verdict (coverage.c) ---------------------------------------------------- */
typedef enum cf_verdict_t { CF_VERDICT_PASS = 0, CF_VERDICT_FAIL, CF_VERDICT_NOTHING } cf_verdict_t;

typedef struct cf_coverage_t {
  size_t total, ran;       /* every row (cases and checks); ran = pass + FAIL */
  size_t cases, cases_ran; /* rows of the case table */
  size_t checks, checks_ran;
  size_t ops_total, ops_ran;   /* distinct ops selected / with a case that ran */
  uint32_t dtypes_ran;         /* PARITY_DTYPE_BIT of dtypes with a case that ran */
  uint32_t claimed_not_run;    /* dtype_mask bits with no case that ran (among those selected) */
  uint32_t dtypes_unsupported; /* selected dtypes every case of which the device refused */
  size_t unsupported_other;    /* unsupported cases outside those dtypes */
  int32_t verdict;             /* cf_verdict_t */
  char ops[400];               /* "add, mul, sum" or "all 42 ops" */
  char dtypes[96];             /* "f32, f64" */
} cf_coverage_t;

void cf_coverage(const cf_report_t *rep, const cf_backend_summary_t *b, cf_coverage_t *cov);
const char *cf_verdict_name(int32_t verdict);
/* "PASS on 48 of 2,791 cases (1.7 %): add, mul, sum in f32" — the verdict line's text. */
void cf_verdict_text(const cf_backend_summary_t *b, const cf_coverage_t *cov, char *buf, size_t n);
/* "2,791" */
const char *cf_thousands(size_t v, char *buf, size_t n);

/* ---- console (console.c) ------------------------------------------------------------------ */
typedef struct cf_console_t {
  int verbose;       /* the per-case table as it runs */
  int failures_only; /* with verbose: failing rows only */
  int progress;      /* one self-overwriting progress line (stdout is a terminal) */
} cf_console_t;

void cf_console_begin(const cf_console_t *con, const cf_report_t *rep, const cf_backend_summary_t *b);
void cf_console_result(const cf_console_t *con, const cf_report_t *rep, const cf_result_t *r, size_t done,
                       size_t total);
/* Summary per op family and dtype, failures with operands and commands, unsupported per op,
 * and the verdict: once per backend. */
void cf_console_end(const cf_console_t *con, const cf_report_t *rep, const cf_backend_summary_t *b);
/* --support: per op x dtype x direction among the selected cases (selected[i] for cases->items[i]),
 * supported or not with the plugin's reason, from supports() on the case's descriptors. */
void cf_print_support(cf_env_t *env, const cf_case_list_t *cases, const unsigned char *selected);
/* Op family of a result for summaries: "unary", "binary", ..., "checks". */
const char *cf_result_family(const cf_result_t *r);

#endif
