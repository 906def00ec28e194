/* dist.c — the distributed layer: deterministic all-reduce and broadcast over MPI point-to-point
 * messages, with signatures checked before any data moves and every wait bounded by a deadline.
 *
 * All-reduce of C elements on N ranks (reduce-scatter then all-gather, by hand so that the order
 * of additions is ours and so that a peer that does not answer can be named):
 *   chunk c = elements [C*c/N, C*(c+1)/N). Phase 1: every rank sends its chunk c to rank c;
 *   rank c tree-sums the N contributions in rank order. Phase 2: rank c sends the summed chunk
 *   to every rank. Each rank receives (N-1)/N of the data per phase, as a ring would. */
#define _POSIX_C_SOURCE 200809L
#include "parity/dist.h"

#include <mpi.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist_internal.h"
#include "parity_support/dtype.h"
#include "parity_support/env.h"

static const char *kind_name(int k) {
  return k == KIND_BARRIER     ? "barrier"
         : k == KIND_BCAST     ? "broadcast"
         : k == KIND_ALLREDUCE ? "allreduce"
         : k == KIND_BUCKETS   ? "buckets_create"
                               : "unknown call";
}

/* Grow-only scratch buffer. */
static char *scratch(char **buf, uint64_t *cap, uint64_t need) {
  if (need > *cap) {
    char *b = realloc(*buf, need);
    if (!b) return NULL;
    *buf = b;
    *cap = need;
  }
  return *buf ? *buf : (*buf = malloc(1));
}

static _Thread_local char g_err[1024];
const char *parity_dist_last_error(void) { return g_err; }

parity_status_t dist_fail(parity_status_t st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof g_err, fmt, ap);
  va_end(ap);
  return st;
}

double dist_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void parity_dist_options_init(parity_dist_options_t *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->abort_on_fault = -1;
}

parity_status_t parity_dist_init(int *argc, char ***argv, const parity_dist_options_t *opts, parity_dist_t **out) {
  if (!out) return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "parity_dist_init: out is NULL");
  *out = NULL;
  parity_dist_options_t o;
  parity_dist_options_init(&o);
  if (opts) memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
  /* the timeout, checked before MPI starts: every wait is bounded, so nan, inf and garbage are refused */
  double timeout_s = o.timeout_s;
  char msg[200];
  if (timeout_s != timeout_s || timeout_s > 86400)
    return dist_fail(PARITY_STATUS_INVALID_ARGUMENT,
                     "parity_dist_init: timeout_s %g is not in [0.001, 86400] seconds "
                     "(<= 0: PARITY_DIST_TIMEOUT, else 60)",
                     timeout_s);
  if (timeout_s > 0 && timeout_s < 0.001)
    return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "parity_dist_init: timeout_s %g is not in [0.001, 86400] seconds",
                     timeout_s);
  if (timeout_s <= 0 &&
      psup_env_double("PARITY_DIST_TIMEOUT", 0.001, 86400, "seconds", 60, &timeout_s, msg, sizeof msg) != 0)
    return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "parity_dist_init: %s", msg);
  parity_dist_t *d = calloc(1, sizeof *d);
  if (!d) return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "parity_dist_init: out of memory");
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
      free(d);
      return dist_fail(PARITY_STATUS_UNAVAILABLE, "parity_dist_init: MPI_Init failed");
    }
    d->owns_mpi = 1;
  }
  if (MPI_Comm_dup(MPI_COMM_WORLD, &d->comm) != MPI_SUCCESS) {
    free(d);
    return dist_fail(PARITY_STATUS_UNAVAILABLE, "parity_dist_init: MPI_Comm_dup failed");
  }
  MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(d->comm, &d->rank);
  MPI_Comm_size(d->comm, &d->size);
  d->timeout_s = timeout_s;
  d->abort_on_fault = o.abort_on_fault < 0 ? 1 : o.abort_on_fault;
  *out = d;
  return PARITY_STATUS_OK;
}

void parity_dist_finalize(parity_dist_t *d) {
  if (!d) return;
  MPI_Comm_free(&d->comm);
  if (d->owns_mpi) MPI_Finalize();
  free(d->stage);
  free(d->slots);
  free(d);
}

int parity_dist_rank(const parity_dist_t *d) { return d ? d->rank : 0; }
int parity_dist_size(const parity_dist_t *d) { return d ? d->size : 1; }
double parity_dist_timeout(const parity_dist_t *d) { return d ? d->timeout_s : 0; }

void parity_dist_abort(parity_dist_t *d, int code, const char *msg) {
  fprintf(stderr, "parity-dist: rank %d: %s\n", d ? d->rank : -1, msg);
  fflush(stderr);
  fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, code);
  exit(code); /* not reached */
}

/* A peer failed to answer or MPI reported an error: message, then abort or return. */
static parity_status_t fault(parity_dist_t *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof g_err, fmt, ap);
  va_end(ap);
  if (d->abort_on_fault) {
    char msg[1100];
    snprintf(msg, sizeof msg, "%s; aborting the job", g_err);
    parity_dist_abort(d, 70, msg);
  }
  return PARITY_STATUS_UNAVAILABLE;
}

/* ---- bounded waiting ------------------------------------------------------------------------ */

static int reqset_add(reqset_t *s, int peer, int is_recv) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    MPI_Request *r = realloc(s->req, sizeof *r * (size_t)cap);
    if (r) s->req = r;
    int *p = realloc(s->peer, sizeof *p * (size_t)cap);
    if (p) s->peer = p;
    int *q = realloc(s->is_recv, sizeof *q * (size_t)cap);
    if (q) s->is_recv = q;
    if (!r || !p || !q) return -1;
    s->cap = cap;
  }
  s->req[s->n] = MPI_REQUEST_NULL;
  s->peer[s->n] = peer;
  s->is_recv[s->n] = is_recv;
  return s->n++;
}
static void reqset_free(reqset_t *s) {
  free(s->req);
  free(s->peer);
  free(s->is_recv);
  memset(s, 0, sizeof *s);
}

static parity_status_t post(parity_dist_t *d, reqset_t *s, int is_recv, void *buf, uint64_t bytes, int peer, int tag,
                            const char *what) {
  if (bytes > (uint64_t)0x7fffffff)
    return dist_fail(PARITY_STATUS_OUT_OF_RANGE, "%s: a message of %llu bytes is larger than MPI's int count", what,
                     (unsigned long long)bytes);
  int i = reqset_add(s, peer, is_recv);
  if (i < 0) return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
  int rc = is_recv ? MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, d->comm, &s->req[i])
                   : MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, d->comm, &s->req[i]);
  if (rc != MPI_SUCCESS) {
    char es[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, es, &len);
    return fault(d, "%s: %s to rank %d failed: %s", what, is_recv ? "receive" : "send", peer, es);
  }
  return PARITY_STATUS_OK;
}

/* Test once; 1 when everything in s is complete. */
static parity_status_t test_all(parity_dist_t *d, reqset_t *s, const char *what, int *done) {
  int all = 1;
  for (int i = 0; i < s->n; i++) {
    if (s->req[i] == MPI_REQUEST_NULL) continue;
    int flag = 0;
    MPI_Status st;
    int rc = MPI_Test(&s->req[i], &flag, &st);
    if (rc != MPI_SUCCESS) {
      char es[MPI_MAX_ERROR_STRING];
      int len = 0;
      MPI_Error_string(rc, es, &len);
      return fault(d, "%s: rank %d failed (%s)", what, s->peer[i], es);
    }
    if (!flag) all = 0;
  }
  *done = all;
  return PARITY_STATUS_OK;
}

void dist_relax(double started) {
  if (dist_now_s() - started < 0.05)
    sched_yield();
  else {
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
}

/* Name every peer still owing us a message (pending receives: those ranks did not send; when
 * only sends are pending, their receivers did not take them). */
parity_status_t dist_timed_out(parity_dist_t *d, reqset_t *s, const char *what) {
  char list[256] = "";
  int found = 0;
  for (int pass = 0; pass < 2 && !found; pass++)
    for (int i = 0; i < s->n; i++) {
      if (s->req[i] == MPI_REQUEST_NULL || s->is_recv[i] != !pass) continue;
      int seen = 0;
      for (int j = 0; j < i; j++)
        seen |= s->req[j] != MPI_REQUEST_NULL && s->is_recv[j] == !pass && s->peer[j] == s->peer[i];
      if (seen) continue;
      size_t len = strlen(list);
      if (len < sizeof list - 16) snprintf(list + len, sizeof list - len, found ? ", %d" : "%d", s->peer[i]);
      found++;
    }
  return fault(d, "%s %s did not respond within %g s (%s)", found > 1 ? "ranks" : "rank", found ? list : "?",
               d->timeout_s, what);
}

static parity_status_t wait_all(parity_dist_t *d, reqset_t *s, const char *what) {
  double t0 = dist_now_s(), deadline = t0 + d->timeout_s;
  for (;;) {
    int done = 0;
    parity_status_t st = test_all(d, s, what, &done);
    if (st || done) return st;
    if (dist_now_s() > deadline) return dist_timed_out(d, s, what);
    dist_relax(t0);
  }
}

/* ---- signatures ------------------------------------------------------------------------------ */
typedef struct sig_t {
  uint32_t magic, kind;
  uint64_t seq;
  uint32_t count;
  int32_t root, op;
  uint32_t extra; /* buckets_create: the bucket size in bytes (saturated) */
  uint64_t hash;  /* of every tensor's descriptor */
} sig_t;

static void describe(parity_tensor_t *t, desc_t *o) {
  memset(o, 0, sizeof *o);
  o->dtype = parity_tensor_dtype(t);
  o->rank = (int32_t)parity_tensor_rank(t);
  const int64_t *sh = parity_tensor_shape(t);
  for (int i = 0; i < o->rank && i < MAX_DIMS; i++) o->dims[i] = sh[i];
  if (o->rank > MAX_DIMS) o->dims[MAX_DIMS - 1] = parity_tensor_numel(t); /* fold the rest */
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static void desc_str(const desc_t *x, char *out, size_t cap) {
  int n = snprintf(out, cap, "%s[", psup_dtype_name(x->dtype));
  for (int i = 0; i < x->rank && i < MAX_DIMS && n < (int)cap; i++)
    n += snprintf(out + n, cap - (size_t)n, i ? ",%lld" : "%lld", (long long)x->dims[i]);
  if (n < (int)cap) snprintf(out + n, cap - (size_t)n, "]");
}

/* Exchange (kind, seq, count, descriptors) with every rank; identical verdict on every rank.
 * descs may be NULL when count == 0. */
parity_status_t dist_check_signature(parity_dist_t *d, int kind, int root, int op, const desc_t *descs, uint32_t count,
                                     uint32_t extra) {
  const char *what = kind_name(kind);
  uint64_t seq = ++d->seq;
  if (d->size == 1) return PARITY_STATUS_OK;
  sig_t mine = {
      .magic = 0x50445331u, .kind = (uint32_t)kind, .seq = seq, .count = count, .root = root, .op = op, .extra = extra};
  mine.hash = fnv(1469598103934665603ull, descs, sizeof *descs * count);
  sig_t *all = calloc((size_t)d->size, sizeof *all);
  if (!all) return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
  all[d->rank] = mine;
  reqset_t s = {0};
  char label[96];
  snprintf(label, sizeof label, "signature exchange of %s #%llu", what, (unsigned long long)seq);
  parity_status_t st = PARITY_STATUS_OK;
  for (int r = 0; r < d->size && !st; r++)
    if (r != d->rank) st = post(d, &s, 1, &all[r], sizeof *all, r, TAG_SIG, label);
  for (int r = 0; r < d->size && !st; r++)
    if (r != d->rank) st = post(d, &s, 0, &mine, sizeof mine, r, TAG_SIG, label);
  if (!st) st = wait_all(d, &s, label);
  reqset_free(&s);
  if (st) {
    free(all);
    return st;
  }
  /* Judge against rank 0's signature, so that every rank writes the same message. */
  const sig_t *ref = &all[0];
  int need_descs = 0;
  for (int r = 1; r < d->size && !st; r++) {
    const sig_t *x = &all[r];
    if (x->magic != ref->magic || x->kind != ref->kind || x->seq != ref->seq)
      st = dist_fail(
          PARITY_STATUS_INVALID_ARGUMENT, "ranks out of step: rank %d is in %s #%llu while rank 0 is in %s #%llu", r,
          kind_name((int)x->kind), (unsigned long long)x->seq, kind_name((int)ref->kind), (unsigned long long)ref->seq);
    else if (x->count != ref->count)
      st = dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: rank %d passed %u tensors, rank 0 passed %u", what, r,
                     x->count, ref->count);
    else if (x->root != ref->root)
      st = dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: rank %d names root %d, rank 0 names root %d", what, r,
                     x->root, ref->root);
    else if (x->op != ref->op)
      st = dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: rank %d asks for %s, rank 0 for %s", what, r,
                     x->op ? "mean" : "sum", ref->op ? "mean" : "sum");
    else if (x->extra != ref->extra)
      st = dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: rank %d uses buckets of %u bytes, rank 0 of %u", what, r,
                     x->extra, ref->extra);
    else if (x->hash != ref->hash)
      need_descs = 1;
  }
  free(all);
  if (st || !need_descs) return st;
  /* Some descriptor differs: exchange them all (every rank took this branch) and name the first. */
  desc_t *alld = calloc((size_t)d->size * count, sizeof *alld);
  if (!alld) return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
  memcpy(alld + (size_t)d->rank * count, descs, sizeof *descs * count);
  for (int r = 0; r < d->size && !st; r++)
    if (r != d->rank) st = post(d, &s, 1, alld + (size_t)r * count, sizeof *descs * count, r, TAG_SIGDESC, label);
  for (int r = 0; r < d->size && !st; r++)
    if (r != d->rank) st = post(d, &s, 0, (void *)descs, sizeof *descs * count, r, TAG_SIGDESC, label);
  if (!st) st = wait_all(d, &s, label);
  reqset_free(&s);
  for (int r = 1; r < d->size && !st; r++)
    for (uint32_t i = 0; i < count; i++) {
      const desc_t *a = alld + (size_t)r * count + i, *b = alld + i;
      if (memcmp(a, b, sizeof *a)) {
        char sa[160], sb[160];
        desc_str(a, sa, sizeof sa);
        desc_str(b, sb, sizeof sb);
        st = dist_fail(PARITY_STATUS_INVALID_ARGUMENT,
                       "%s: tensor %u differs across ranks: rank %d has %s, rank 0 has %s", what, i, r, sa, sb);
        break;
      }
    }
  free(alld);
  if (!st) st = dist_fail(PARITY_STATUS_INTERNAL, "%s: signatures differ but no descriptor does", what);
  return st;
}

parity_status_t parity_dist_tree_sum(parity_dtype_t dt, uint64_t count, const void *const *parts, uint32_t n,
                                     void *out) {
  if (!dsum_is_float(dt))
    return dist_fail(PARITY_STATUS_UNSUPPORTED, "parity_dist_tree_sum: %s is not a float dtype", psup_dtype_name(dt));
  if (!n || !parts || !out) return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "parity_dist_tree_sum: no parts");
  size_t es = psup_dtype_size(dt);
  if (n == 1) {
    if (out != parts[0]) memmove(out, parts[0], es * count);
    return PARITY_STATUS_OK;
  }
  /* Work on copies of every part but the first (slot 0 is out). */
  char **slot = calloc(n, sizeof *slot);
  char *tmp = malloc(es * count * (n - 1) + 1);
  if (!slot || !tmp) {
    free(slot);
    free(tmp);
    return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "parity_dist_tree_sum: out of memory");
  }
  if (out != parts[0]) memmove(out, parts[0], es * count);
  slot[0] = out;
  for (uint32_t i = 1; i < n; i++) {
    slot[i] = tmp + es * count * (i - 1);
    memcpy(slot[i], parts[i], es * count);
  }
  dsum_tree(dt, slot, n, count);
  free(slot);
  free(tmp);
  return PARITY_STATUS_OK;
}

/* ---- the all-reduce state machine (shared by the simple and the bucketed path) ------------------ */

static uint64_t chunk_lo(uint64_t count, int c, int n) {
  return (uint64_t)((unsigned __int128)count * (unsigned)c / (unsigned)n);
}

parity_status_t dist_ar_start(parity_dist_t *d, ar_t *a) {
  int n = d->size, me = d->rank;
  if (n == 1) {
    if (a->op == PARITY_DIST_MEAN) dsum_divide(a->dt, a->buf, a->count, 1);
    a->phase = 3;
    return PARITY_STATUS_OK;
  }
  uint64_t lo = chunk_lo(a->count, me, n), hi = chunk_lo(a->count, me + 1, n), mine = hi - lo;
  if (!scratch(&a->slots, &a->slots_cap, a->es * mine * (uint64_t)n + 1))
    return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of memory", a->what);
  memcpy(a->slots + a->es * mine * (size_t)me, a->buf + a->es * lo, a->es * mine);
  parity_status_t st = PARITY_STATUS_OK;
  for (int r = 0; r < n && !st; r++)
    if (r != me) st = post(d, &a->rs, 1, a->slots + a->es * mine * (size_t)r, a->es * mine, r, a->tag1, a->what);
  for (int c = 0; c < n && !st; c++)
    if (c != me) {
      uint64_t clo = chunk_lo(a->count, c, n), chi = chunk_lo(a->count, c + 1, n);
      st = post(d, &a->rs, 0, a->buf + a->es * clo, a->es * (chi - clo), c, a->tag1, a->what);
    }
  a->phase = 1;
  return st;
}

/* Advance without blocking; *busy stays 1 while messages are in flight. */
parity_status_t dist_ar_progress(parity_dist_t *d, ar_t *a, int *busy) {
  *busy = 0;
  if (a->phase == 0 || a->phase == 3) return PARITY_STATUS_OK;
  int done = 0;
  parity_status_t st = test_all(d, &a->rs, a->what, &done);
  if (st) return st;
  if (!done) {
    *busy = 1;
    return PARITY_STATUS_OK;
  }
  int n = d->size, me = d->rank;
  a->rs.n = 0;
  if (a->phase == 1) {
    /* The phase-1 sends read buf's other chunks; all complete now, so buf may be overwritten. */
    uint64_t lo = chunk_lo(a->count, me, n), hi = chunk_lo(a->count, me + 1, n), mine = hi - lo;
    char *slot[64] = {0}, **sl = n <= 64 ? slot : malloc(sizeof *sl * (size_t)n);
    if (!sl) return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of memory", a->what);
    for (int r = 0; r < n; r++) sl[r] = a->slots + a->es * mine * (size_t)r;
    dsum_tree(a->dt, sl, (uint32_t)n, mine);
    if (sl != slot) free(sl);
    if (a->op == PARITY_DIST_MEAN) dsum_divide(a->dt, a->slots, mine, n);
    memcpy(a->buf + a->es * lo, a->slots, a->es * mine);
    for (int c = 0; c < n && !st; c++)
      if (c != me) {
        uint64_t clo = chunk_lo(a->count, c, n), chi = chunk_lo(a->count, c + 1, n);
        st = post(d, &a->rs, 1, a->buf + a->es * clo, a->es * (chi - clo), c, a->tag2, a->what);
      }
    for (int r = 0; r < n && !st; r++)
      if (r != me) st = post(d, &a->rs, 0, a->buf + a->es * lo, a->es * mine, r, a->tag2, a->what);
    a->phase = 2;
    *busy = 1;
    return st;
  }
  a->phase = 3;
  return PARITY_STATUS_OK;
}

static parity_status_t ar_wait(parity_dist_t *d, ar_t *a) {
  double t0 = dist_now_s(), deadline = t0 + d->timeout_s;
  for (;;) {
    int busy = 0;
    parity_status_t st = dist_ar_progress(d, a, &busy);
    if (st || !busy) return st;
    if (dist_now_s() > deadline) return dist_timed_out(d, &a->rs, a->what);
    dist_relax(t0);
  }
}

void dist_ar_free(ar_t *a) {
  free(a->slots);
  a->slots = NULL;
  reqset_free(&a->rs);
}

/* ---- staging ------------------------------------------------------------------------------------ */
static uint64_t tensor_bytes(parity_tensor_t *t) {
  return (uint64_t)parity_tensor_numel(t) * psup_dtype_size(parity_tensor_dtype(t));
}

static parity_status_t stage_out(parity_tensor_t *const *ts, uint32_t n, char *buf, const char *what) {
  uint64_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t b = tensor_bytes(ts[i]);
    if (parity_tensor_to_host(ts[i], buf + off, b) != PARITY_STATUS_OK)
      return dist_fail(PARITY_STATUS_DEVICE_ERROR, "%s: reading tensor %u: %s", what, i, parity_last_error());
    off += b;
  }
  return PARITY_STATUS_OK;
}

static parity_status_t stage_in(parity_tensor_t *const *ts, uint32_t n, const char *buf, const char *what) {
  uint64_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t b = tensor_bytes(ts[i]);
    if (parity_tensor_write(ts[i], buf + off, b) != PARITY_STATUS_OK)
      return dist_fail(PARITY_STATUS_DEVICE_ERROR, "%s: writing tensor %u: %s", what, i, parity_last_error());
    off += b;
  }
  return PARITY_STATUS_OK;
}

parity_status_t dist_describe_all(parity_tensor_t *const *ts, uint32_t n, desc_t **out, const char *what) {
  *out = NULL;
  if (n && !ts) return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: tensors is NULL", what);
  desc_t *dd = calloc(n ? n : 1, sizeof *dd);
  if (!dd) return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
  for (uint32_t i = 0; i < n; i++) {
    if (!ts[i]) {
      free(dd);
      return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: tensor %u is NULL", what, i);
    }
    describe(ts[i], &dd[i]);
  }
  *out = dd;
  return PARITY_STATUS_OK;
}

/* ---- public collectives --------------------------------------------------------------------------- */
parity_status_t parity_dist_barrier(parity_dist_t *d) {
  if (!d) return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "parity_dist_barrier: no context");
  return dist_check_signature(d, KIND_BARRIER, 0, 0, NULL, 0, 0);
}

parity_status_t parity_dist_broadcast(parity_dist_t *d, parity_tensor_t *const *ts, uint32_t n, int root) {
  if (!d) return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "parity_dist_broadcast: no context");
  if (root < 0 || root >= d->size)
    return dist_fail(PARITY_STATUS_OUT_OF_RANGE, "broadcast: root %d is not a rank (world size %d)", root, d->size);
  desc_t *dd;
  parity_status_t st = dist_describe_all(ts, n, &dd, "broadcast");
  if (st) return st;
  st = dist_check_signature(d, KIND_BCAST, root, 0, dd, n, 0);
  free(dd);
  if (st || d->size == 1) return st;
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += tensor_bytes(ts[i]);
  char *buf = malloc(total + 1);
  if (!buf)
    return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "broadcast: out of memory for %llu bytes", (unsigned long long)total);
  char what[64];
  snprintf(what, sizeof what, "broadcast #%llu from rank %d", (unsigned long long)d->seq, root);
  reqset_t s = {0};
  if (d->rank == root) {
    st = stage_out(ts, n, buf, what);
    /* A local staging failure still sends (garbage would be wrong): send nothing, abort instead. */
    if (st) parity_dist_abort(d, 70, g_err);
    for (int r = 0; r < d->size && !st; r++)
      if (r != root) st = post(d, &s, 0, buf, total, r, TAG_BCAST, what);
    if (!st) st = wait_all(d, &s, what);
  } else {
    st = post(d, &s, 1, buf, total, root, TAG_BCAST, what);
    if (!st) st = wait_all(d, &s, what);
    if (!st) st = stage_in(ts, n, buf, what);
  }
  reqset_free(&s);
  free(buf);
  return st;
}

static parity_status_t allreduce_buf(parity_dist_t *d, void *data, uint64_t count, parity_dtype_t dt,
                                     parity_dist_op_t op) {
  ar_t a = {.dt = dt,
            .es = psup_dtype_size(dt),
            .count = count,
            .buf = data,
            .tag1 = TAG_P1,
            .tag2 = TAG_P2,
            .op = op,
            .slots = d->slots,
            .slots_cap = d->slots_cap};
  snprintf(a.what, sizeof a.what, "allreduce #%llu", (unsigned long long)d->seq);
  parity_status_t st = dist_ar_start(d, &a);
  if (!st) st = ar_wait(d, &a);
  d->slots = a.slots; /* kept for the next call */
  d->slots_cap = a.slots_cap;
  a.slots = NULL;
  dist_ar_free(&a);
  return st;
}

parity_status_t parity_dist_allreduce_host(parity_dist_t *d, void *data, uint64_t count, parity_dtype_t dt,
                                           parity_dist_op_t op) {
  if (!d || (!data && count))
    return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "parity_dist_allreduce_host: no context or data");
  if (op != PARITY_DIST_SUM && op != PARITY_DIST_MEAN)
    return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "allreduce: unknown op %d", (int)op);
  if (!dsum_is_float(dt))
    return dist_fail(PARITY_STATUS_UNSUPPORTED, "allreduce: %s is not a float dtype", psup_dtype_name(dt));
  desc_t one = {.dtype = dt, .rank = 1, .dims = {(int64_t)count}};
  parity_status_t st = dist_check_signature(d, KIND_ALLREDUCE, 0, op, &one, 1, 0);
  if (st) return st;
  return allreduce_buf(d, data, count, dt, op);
}

parity_status_t parity_dist_allreduce(parity_dist_t *d, parity_tensor_t *const *ts, uint32_t n, parity_dist_op_t op) {
  if (!d) return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "parity_dist_allreduce: no context");
  if (op != PARITY_DIST_SUM && op != PARITY_DIST_MEAN)
    return dist_fail(PARITY_STATUS_INVALID_ARGUMENT, "allreduce: unknown op %d", (int)op);
  desc_t *dd;
  parity_status_t st = dist_describe_all(ts, n, &dd, "allreduce");
  if (st) return st;
  /* Local checks become collective verdicts through the signature: check it first. */
  st = dist_check_signature(d, KIND_ALLREDUCE, 0, op, dd, n, 0);
  free(dd);
  if (st) return st;
  if (!n) return PARITY_STATUS_OK;
  parity_dtype_t dt = parity_tensor_dtype(ts[0]);
  for (uint32_t i = 0; i < n; i++)
    if (parity_tensor_dtype(ts[i]) != dt || !dsum_is_float(dt))
      return dist_fail(PARITY_STATUS_UNSUPPORTED,
                       "allreduce: tensor %u is %s, tensor 0 is %s: one float dtype per call", i,
                       psup_dtype_name(parity_tensor_dtype(ts[i])), psup_dtype_name(dt));
  uint64_t total = 0, count = 0;
  for (uint32_t i = 0; i < n; i++) {
    total += tensor_bytes(ts[i]);
    count += (uint64_t)parity_tensor_numel(ts[i]);
  }
  char *buf = scratch(&d->stage, &d->stage_cap, total + 1);
  if (!buf)
    return dist_fail(PARITY_STATUS_OUT_OF_MEMORY, "allreduce: out of memory for %llu bytes", (unsigned long long)total);
  st = stage_out(ts, n, buf, "allreduce");
  /* The signature matched everywhere, so peers are already sending: a local failure cannot be
   * taken back consistently. */
  if (st) parity_dist_abort(d, 70, g_err);
  st = allreduce_buf(d, buf, count, dt, op);
  if (!st) st = stage_in(ts, n, buf, "allreduce");
  return st;
}
