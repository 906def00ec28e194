/* exec.c — memory layouts of operands on a device, and running one op on a device inside
 * guarded buffers (the host copies themselves are operands.c's).
 *
 * Every buffer the suite allocates is GUARD bytes of a position-dependent pattern, the tensor's
 * span (with its gaps, for strided layouts), and GUARD more bytes (PARITY_CONFORM_PLACEMENT can
 * leave out either side). After the run the whole buffer
 * is read back: every byte that is not an element of an output must be exactly as written. That
 * one check catches writes before or past a tensor, into the gaps of a strided view, and into
 * inputs. Output elements start as a sentinel that differs between the two runs of a case, so an
 * element a kernel never writes shows up as a mismatch or as non-determinism. An op run in place
 * (cf_op_t.in_place) has one slot for the input and its output: the input's elements, read back
 * as the output, and the guard bytes around them checked as an output's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "parity_support/env.h"
#include "parity_support/hugepages.h"

#define GUARD 64

/* PARITY_CONFORM_PLACEMENT: guard bytes before and after every tensor (guarded, the default), or
 * none after it (end: the tensor's last byte is its buffer's last) or before it (start: the
 * tensor's first stored element at byte 0, the misaligned layout one element in). A checking
 * executor's allocation bounds are then the tensor's own on that side: a read a few elements past
 * the tensor, whose value is never used, leaves the allocation instead of landing in a guard. */
static int placement; /* 0 guarded, 1 end, 2 start */
static const char *const placements[] = {"guarded", "end", "start", NULL};

int cf_placement_configure(char *msg, size_t n) {
  return psup_env_choice("PARITY_CONFORM_PLACEMENT", placements, 0, &placement, msg, n) == 0 ? placement : -1;
}

/* The guard before operand `slot` (inputs first, then outputs) grows by 16 bytes a slot, so no two
 * operands of a case sit at the same offset of their buffers: a plugin that takes one operand's
 * offset for another's (a copy from the output's offset, both outputs written at the first's) reads
 * or writes the wrong elements instead of, by chance, the right ones. Still 16-byte aligned. */
static uint64_t guard_before(uint32_t slot) { return placement == 2 ? 0 : GUARD + 16u * slot; }
static uint64_t guard_after(void) { return placement == 1 ? 0 : GUARD; }

/* Element strides of a spec's view and the element offset of element 0 from the start of the
 * payload; *span = elements the payload must hold. */
static void layout_of(const cf_spec_t *s, int64_t *strides, int64_t *base, int64_t *span) {
  uint32_t r = s->rank;
  int64_t dims[PARITY_MAX_RANK];
  uint32_t order[PARITY_MAX_RANK];
  int empty = 0;
  for (uint32_t a = 0; a < r; a++) {
    dims[a] = (s->bcast >> a) & 1u ? 1 : s->shape[a];
    order[a] = a;
    if (s->shape[a] == 0) empty = 1;
  }
  if (s->layout == CF_LAYOUT_TRANSPOSED && r >= 2) {
    order[r - 1] = r - 2;
    order[r - 2] = r - 1;
  }
  int64_t acc = s->layout == CF_LAYOUT_STEP ? 2 : 1;
  for (int32_t j = (int32_t)r - 1; j >= 0; j--) {
    uint32_t a = order[j];
    strides[a] = acc;
    acc *= dims[a] > 0 ? dims[a] : 1;
  }
  *base = 0;
  *span = 1;
  for (uint32_t a = 0; a < r; a++) *span += (dims[a] - 1) * strides[a];
  if (empty) *span = 0;
  if (s->layout == CF_LAYOUT_REVERSED && r >= 1 && !empty) {
    *base += (dims[r - 1] - 1) * strides[r - 1];
    strides[r - 1] = -strides[r - 1];
  }
  if (s->layout == CF_LAYOUT_MISALIGNED) *base += 1;
  for (uint32_t a = 0; a < r; a++)
    if ((s->bcast >> a) & 1u) strides[a] = 0;
}

const char *cf_spec_describe(const char *name, const cf_spec_t *s, uint32_t slot, char *buf, size_t n) {
  static const char *const layouts[] = {"contiguous", "transposed", "step 2", "reversed", "misaligned"};
  int64_t strides[PARITY_MAX_RANK], base, span;
  layout_of(s, strides, &base, &span);
  size_t used = (size_t)snprintf(buf, n, "%s %s[", name, psup_dtype_name(s->dtype));
  for (uint32_t a = 0; a < s->rank && used < n; a++)
    used += (size_t)snprintf(buf + used, n - used, "%s%lld", a ? "," : "", (long long)s->shape[a]);
  if (used < n) used += (size_t)snprintf(buf + used, n - used, "] strides (");
  for (uint32_t a = 0; a < s->rank && used < n; a++)
    used += (size_t)snprintf(buf + used, n - used, "%s%lld", a ? "," : "", (long long)strides[a]);
  if (used < n)
    used += (size_t)snprintf(buf + used, n - used, ") %s, offset %llu B",
                             s->layout >= 0 && s->layout <= 4 ? layouts[s->layout] : "?",
                             (unsigned long long)(guard_before(slot) + (uint64_t)base * psup_dtype_size(s->dtype)));
  if (s->bcast && used < n) {
    used += (size_t)snprintf(buf + used, n - used, ", broadcast axes {");
    for (uint32_t a = 0, first = 1; a < s->rank && used < n; a++)
      if ((s->bcast >> a) & 1u) used += (size_t)snprintf(buf + used, n - used, "%s%u", first ? "" : ",", a), first = 0;
    if (used < n) snprintf(buf + used, n - used, "}");
  }
  return buf;
}

static void desc_of(const cf_spec_t *s, uint32_t slot, parity_plugin_buffer_t *buf, parity_tensor_desc_t *d,
                    uint64_t *out_bytes) {
  int64_t strides[PARITY_MAX_RANK], base, span;
  layout_of(s, strides, &base, &span);
  psup_tensor_init(d, s->dtype, s->rank, s->shape, buf, 0);
  for (uint32_t a = 0; a < s->rank; a++) d->strides[a] = strides[a];
  uint32_t esz = psup_dtype_size(s->dtype);
  d->offset_bytes = guard_before(slot) + (uint64_t)base * esz;
  if (s->layout == CF_LAYOUT_MISALIGNED) span += 1; /* the element of misalignment */
  *out_bytes = guard_before(slot) + (uint64_t)span * esz + guard_after();
}

uint64_t cf_spec_buffer_bytes(const cf_spec_t *s, uint32_t slot) {
  parity_tensor_desc_t d;
  uint64_t bytes;
  desc_of(s, slot, NULL, &d, &bytes);
  return bytes;
}

/* A contiguous, unbroadcast view: its elements are one run of bytes from offset_bytes on. */
static int dense(const cf_spec_t *s) { return s->layout == CF_LAYOUT_CONTIG && s->bcast == 0; }

/* Inputs larger than this are compared with what was written in pieces of this size after the
 * run, so that a 2 GiB operand does not need a second 2 GiB copy on the host. */
#define READBACK_PIECE ((uint64_t)64 << 20)
/* what a slot's write source holds once parity_buffer_write has returned (stage_slot) */
#define CF_WRITE_SCRIBBLE 0xA7

static void fill_desc(parity_op_desc_t *d, const cf_op_t *op, parity_tensor_desc_t *ins, parity_tensor_desc_t *outs) {
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->op = op->op;
  d->direction = op->direction;
  d->num_inputs = op->nin;
  d->num_outputs = op->nout;
  d->params = op->params;
  for (uint32_t i = 0; i < op->nin; i++) d->inputs[i] = op->in[i] ? &ins[i] : NULL;
  for (uint32_t i = 0; i < op->nout; i++) d->outputs[i] = op->out[i] ? &outs[i] : NULL;
}

cf_exec_status_t cf_supports(parity_device_t *dev, const cf_op_t *op, char *msg, size_t n) {
  parity_tensor_desc_t ins[PARITY_MAX_INPUTS], outs[PARITY_MAX_OUTPUTS];
  uint64_t bytes;
  for (uint32_t i = 0; i < op->nin; i++)
    if (op->in[i]) desc_of(&op->in[i]->spec, i, NULL, &ins[i], &bytes);
  for (uint32_t i = 0; i < op->nout; i++)
    if (op->out[i]) desc_of(op->out[i], op->nin + i, NULL, &outs[i], &bytes);
  parity_op_desc_t d;
  fill_desc(&d, op, ins, outs);
  parity_status_t st = parity_device_supports(dev, &d);
  if (st == PARITY_STATUS_OK) return CF_EXEC_OK;
  snprintf(msg, n, "%s", parity_last_error());
  return st == PARITY_STATUS_UNSUPPORTED ? CF_EXEC_UNSUPPORTED : CF_EXEC_ERROR;
}

static uint8_t guard_byte(uint64_t i, uint32_t which) { return (uint8_t)(0xA5u + 0x3Bu * (uint32_t)i + 0x61u * which); }

/* Bytes [from, to) of a slot's image: the guard pattern, byte b being guard_byte(b % 256, which)
 * (written 256 bytes at a time, then copied in doubling runs, each a multiple of the period). */
static void fill_guard(unsigned char *image, uint64_t from, uint64_t to, uint32_t which) {
  uint64_t b = from;
  for (; b < to && (b == from || b % 256 != from % 256); b++) image[b] = guard_byte(b % 256, which);
  for (uint64_t run = b - from; b < to; run *= 2) {
    uint64_t len = to - b < run ? to - b : run;
    memcpy(image + b, image + from, len);
    b += len;
  }
}

typedef struct slot_t {
  parity_buffer_t *buf;
  parity_tensor_desc_t desc;
  unsigned char *image, *after;
  uint64_t bytes;
  int is_output;
} slot_t;

/* Element byte offsets (from the buffer start) of every logical element, in order. */
static void each_element(const parity_tensor_desc_t *d, void (*fn)(void *, int64_t, uint64_t), void *u) {
  int64_t n = psup_numel(d);
  if (n <= 0) return;
  const int64_t *arr[1] = {d->strides};
  psup_iter_t it;
  psup_iter_init(&it, d->rank, d->shape, 1, arr);
  uint32_t esz = psup_dtype_size(d->dtype);
  for (int64_t i = 0; i < n; i++, psup_iter_next(&it)) fn(u, i, d->offset_bytes + (uint64_t)(it.off[0] * (int64_t)esz));
}

typedef struct scatter_t {
  unsigned char *image;
  const cf_host_t *h;
  int64_t st[PARITY_MAX_RANK];
  uint32_t esz;
  psup_iter_t it; /* logical -> stored index */
} scatter_t;

static void scatter_one(void *u, int64_t i, uint64_t off) {
  scatter_t *s = u;
  (void)i;
  memcpy(s->image + off, s->h->data + (size_t)s->it.off[0] * s->esz, s->esz);
  psup_iter_next(&s->it);
}

typedef struct gather_t {
  unsigned char *after;
  const unsigned char *image;
  cf_host_t *out;
  uint32_t esz;
} gather_t;

static void gather_one(void *u, int64_t i, uint64_t off) {
  gather_t *g = u;
  memcpy(g->out->data + (size_t)i * g->esz, g->after + off, g->esz);
  memcpy(g->after + off, g->image + off, g->esz); /* element bytes are not checked */
}

typedef struct fill_t {
  unsigned char *image;
  uint8_t sentinel;
  uint32_t esz;
} fill_t;

static void fill_one(void *u, int64_t i, uint64_t off) {
  fill_t *f = u;
  (void)i;
  memset(f->image + off, f->sentinel, f->esz);
}

static void describe_corruption(const slot_t *s, uint32_t index, char *msg, size_t n) {
  uint64_t first = 0;
  while (first < s->bytes && s->after[first] == s->image[first]) first++;
  uint64_t changed = 0, scribbled = 0;
  for (uint64_t b = first; b < s->bytes; b++)
    if (s->after[b] != s->image[b]) changed++, scribbled += s->after[b] == CF_WRITE_SCRIBBLE;
  int64_t lo, hi;
  psup_byte_extent(&s->desc, &lo, &hi);
  if (hi == 0) lo = hi = (int64_t)s->desc.offset_bytes;
  const char *where;
  long long dist = 0;
  if ((int64_t)first < lo)
    where = "before its first element", dist = lo - (int64_t)first;
  else if ((int64_t)first >= hi)
    where = "past its last element", dist = (int64_t)first - hi + 1;
  else
    where = s->is_output ? "inside a gap of the strided view" : "inside its elements";
  if (!s->is_output)
    snprintf(msg, n,
             "input %u was modified: %llu byte(s) changed, the first %s (byte %llu of "
             "its buffer)",
             index, (unsigned long long)changed, where, (unsigned long long)first);
  else if (dist)
    snprintf(msg, n,
             "out-of-bounds write: output %u changed %llu guard byte(s), the first %lld "
             "byte(s) %s",
             index, (unsigned long long)changed, dist, where);
  else
    snprintf(msg, n, "out-of-bounds write: output %u changed %llu byte(s) %s (byte %llu)", index,
             (unsigned long long)changed, where, (unsigned long long)first);
  size_t len = strlen(msg);
  if (changed && scribbled == changed && len < n) /* every changed byte is the write source's scribble */
    snprintf(msg + len, n - len,
             " (every changed byte is %#x, what the write's source held once buffer_write had returned: the plugin "
             "read the caller's memory after buffer_write returned)",
             CF_WRITE_SCRIBBLE);
}

/* Scatter host copy h into the image of an input's view: broadcast axes have stride 0 in the view
 * and in the host copy, so they repeat the same bytes; the scatter covers the stored axes only (a
 * broadcast input of 2^31 logical elements is one stored value, and costs nothing here). */
static void scatter_input(const cf_spec_t *spec, const parity_tensor_desc_t *desc, const cf_host_t *h,
                          unsigned char *image) {
  cf_spec_t stored = *spec;
  parity_tensor_desc_t view = *desc;
  stored.rank = view.rank = 0;
  stored.bcast = 0;
  for (uint32_t a = 0; a < spec->rank; a++) {
    if ((spec->bcast >> a) & 1u) continue;
    stored.shape[stored.rank++] = spec->shape[a];
    view.shape[view.rank] = desc->shape[a];
    view.strides[view.rank++] = desc->strides[a];
  }
  scatter_t sc = {.image = image, .h = h, .esz = psup_dtype_size(spec->dtype)};
  cf_spec_stored_strides(&stored, sc.st);
  const int64_t *arr[1] = {sc.st};
  psup_iter_init(&sc.it, stored.rank, stored.shape, 1, arr);
  each_element(&view, scatter_one, &sc);
}

/* Operand k (inputs first, then outputs) of op into its slot: the guarded image on the host (guard
 * pattern, then the input's elements or the outputs' sentinel), copied into a device buffer. */
static cf_exec_status_t stage_slot(parity_device_t *dev, const cf_op_t *op, uint32_t k, uint8_t sentinel, slot_t *s,
                                   char *msg, size_t n) {
  int out = k >= op->nin;
  const cf_spec_t *spec = out ? op->out[k - op->nin] : (op->in[k] ? &op->in[k]->spec : NULL);
  if (!spec) return CF_EXEC_OK;
  s->is_output = out;
  desc_of(spec, k, NULL, &s->desc, &s->bytes);
  s->image = malloc(s->bytes);
  s->after = out || s->bytes <= READBACK_PIECE ? malloc(s->bytes) : NULL; /* large inputs: in pieces */
  psup_advise_hugepages(s->image, s->bytes);
  if (s->after) psup_advise_hugepages(s->after, s->bytes);
  if (!s->image || (!s->after && (out || s->bytes <= READBACK_PIECE))) {
    snprintf(msg, n, "host out of memory for a %llu-byte buffer", (unsigned long long)s->bytes);
    return CF_EXEC_ERROR;
  }
  uint64_t payload = (uint64_t)cf_spec_numel(spec) * psup_dtype_size(spec->dtype);
  if (dense(spec)) { /* the guard around the elements, which are written next */
    fill_guard(s->image, 0, s->desc.offset_bytes, k);
    fill_guard(s->image, s->desc.offset_bytes + payload, s->bytes, k);
  } else {
    fill_guard(s->image, 0, s->bytes, k);
  }
  if (out && dense(spec)) {
    memset(s->image + s->desc.offset_bytes, sentinel, payload);
  } else if (out) {
    fill_t f = {s->image, sentinel, psup_dtype_size(spec->dtype)};
    each_element(&s->desc, fill_one, &f);
  } else if (payload && dense(spec)) {
    memcpy(s->image + s->desc.offset_bytes, op->in[k]->data, payload);
  } else if (cf_spec_numel(spec) > 0) {
    scatter_input(spec, &s->desc, op->in[k], s->image);
  }
  /* buffer_write copies the host memory before it returns (abi/parity_plugin.h: the caller may
   * reuse it at once). The write goes from s->after, the read-back copy, which nothing needs until
   * the op has run, and that copy is scribbled over as soon as the write returns: a plugin that reads
   * the caller's memory later (an asynchronous copy straight from it) writes the scribble, and the
   * case fails. (Inputs past READBACK_PIECE have no such copy and are written from the image.) */
  const unsigned char *src = s->image;
  if (s->after) {
    memcpy(s->after, s->image, s->bytes);
    src = s->after;
  }
  int written = parity_buffer_alloc(dev, s->bytes, &s->buf) == PARITY_STATUS_OK &&
                parity_buffer_write(s->buf, 0, src, s->bytes) == PARITY_STATUS_OK;
  if (s->after) memset(s->after, CF_WRITE_SCRIBBLE, s->bytes);
  if (!written) {
    snprintf(msg, n, "%s", parity_last_error());
    return CF_EXEC_ERROR;
  }
  s->desc.buffer = parity_buffer_handle(s->buf);
  return CF_EXEC_OK;
}

/* Run op on the staged slots and wait for it. */
static cf_exec_status_t run_slots(parity_device_t *dev, const cf_op_t *op, const slot_t *slots, char *msg, size_t n) {
  parity_tensor_desc_t ins[PARITY_MAX_INPUTS], outs[PARITY_MAX_OUTPUTS];
  for (uint32_t i = 0; i < op->nin; i++) ins[i] = slots[i].desc;
  for (uint32_t i = 0; i < op->nout; i++) outs[i] = slots[op->nin + i].desc;
  parity_op_desc_t d;
  fill_desc(&d, op, ins, outs);
  parity_status_t st = parity_device_run(dev, &d);
  if (st == PARITY_STATUS_OK) st = parity_device_synchronize(dev);
  if (st != PARITY_STATUS_OK) {
    snprintf(msg, n, "%s", parity_last_error());
    return st == PARITY_STATUS_UNSUPPORTED ? CF_EXEC_UNSUPPORTED : CF_EXEC_ERROR;
  }
  return CF_EXEC_OK;
}

/* A dense output: its elements read straight into its host copy, the guard bytes before and after
 * them into `after` and compared with what was written (the elements' own bytes are not checked). */
static cf_exec_status_t read_back_dense_output(const cf_op_t *op, uint32_t k, slot_t *s, cf_host_t *outputs,
                                               cf_exec_status_t result, char *msg, size_t n) {
  cf_host_t *o = &outputs[k - op->nin];
  if (cf_host_alloc_unset(o, op->out[k - op->nin]) != 0) { /* the read below fills it */
    snprintf(msg, n, "host out of memory");
    return CF_EXEC_ERROR;
  }
  uint64_t lo = s->desc.offset_bytes, payload = (uint64_t)o->count * psup_dtype_size(o->spec.dtype);
  uint64_t hi = lo + payload;
  if ((lo && parity_buffer_read(s->buf, 0, s->after, lo) != PARITY_STATUS_OK) ||
      (payload && parity_buffer_read(s->buf, lo, o->data, payload) != PARITY_STATUS_OK) ||
      (hi < s->bytes && parity_buffer_read(s->buf, hi, s->after + hi, s->bytes - hi) != PARITY_STATUS_OK)) {
    snprintf(msg, n, "reading back: %s", parity_last_error());
    return CF_EXEC_ERROR;
  }
  if ((memcmp(s->after, s->image, lo) != 0 || memcmp(s->after + hi, s->image + hi, s->bytes - hi) != 0) &&
      result == CF_EXEC_OK) {
    memcpy(s->after + lo, s->image + lo, payload); /* not checked */
    describe_corruption(s, k - op->nin, msg, n);
    return CF_EXEC_CORRUPT;
  }
  return result;
}

/* Read slot k back after the run: an output's elements into its host copy in outputs, then every
 * other byte compared with what was written. Returns `result`, CF_EXEC_CORRUPT for the first corrupted
 * buffer (its message kept), or CF_EXEC_ERROR. */
static cf_exec_status_t read_back_slot(const cf_op_t *op, uint32_t k, slot_t *s, cf_host_t *outputs,
                                       cf_exec_status_t result, char *msg, size_t n) {
  if (!s->after) { /* a large input: compared in pieces; read whole only to describe a change */
    unsigned char *piece = malloc(READBACK_PIECE);
    int changed = 0;
    for (uint64_t at = 0; piece && at < s->bytes && !changed; at += READBACK_PIECE) {
      uint64_t len = s->bytes - at < READBACK_PIECE ? s->bytes - at : READBACK_PIECE;
      if (parity_buffer_read(s->buf, at, piece, len) != PARITY_STATUS_OK) {
        free(piece);
        snprintf(msg, n, "reading back: %s", parity_last_error());
        return CF_EXEC_ERROR;
      }
      changed = memcmp(piece, s->image + at, len) != 0;
    }
    free(piece);
    if (!changed || result != CF_EXEC_OK) return result;
    s->after = malloc(s->bytes);
    if (!s->after) {
      snprintf(msg, n, "input %u was modified (host out of memory describing how)", k);
      return CF_EXEC_CORRUPT;
    }
  }
  if (s->is_output && dense(op->out[k - op->nin])) return read_back_dense_output(op, k, s, outputs, result, msg, n);
  if (parity_buffer_read(s->buf, 0, s->after, s->bytes) != PARITY_STATUS_OK) {
    snprintf(msg, n, "reading back: %s", parity_last_error());
    return CF_EXEC_ERROR;
  }
  if (s->is_output) {
    cf_host_t *o = &outputs[k - op->nin];
    cf_spec_t spec = *op->out[k - op->nin];
    spec.bcast = 0;
    if (cf_host_alloc(o, &spec) != 0) {
      snprintf(msg, n, "host out of memory");
      return CF_EXEC_ERROR;
    }
    gather_t g = {s->after, s->image, o, psup_dtype_size(spec.dtype)};
    each_element(&s->desc, gather_one, &g);
  }
  if (memcmp(s->after, s->image, s->bytes) != 0 && result == CF_EXEC_OK) {
    describe_corruption(s, s->is_output ? k - op->nin : k, msg, n);
    return CF_EXEC_CORRUPT;
  }
  return result;
}

/* Output 0 of an op run in place: input k's slot, moved (the input keeps its descriptor for the run;
 * the buffer is read back once, as the output). */
static cf_exec_status_t alias_slot(const cf_op_t *op, slot_t *slots, char *msg, size_t n) {
  uint32_t k = op->in_place - 1;
  const cf_spec_t *in = k < op->nin && op->in[k] ? &op->in[k]->spec : NULL, *out = op->out[0];
  if (!in || !out || in->dtype != out->dtype || in->rank != out->rank || in->layout != out->layout || in->bcast ||
      out->bcast || memcmp(in->shape, out->shape, sizeof in->shape) != 0) {
    snprintf(msg, n, "conformance suite: an in-place case whose output is not exactly input %u's view", k);
    return CF_EXEC_ERROR;
  }
  slot_t *s = &slots[op->nin];
  *s = slots[k];
  s->is_output = 1;
  slots[k].buf = NULL;
  slots[k].image = slots[k].after = NULL;
  if (!s->after && !(s->after = malloc(s->bytes))) {
    snprintf(msg, n, "host out of memory for a %llu-byte buffer", (unsigned long long)s->bytes);
    return CF_EXEC_ERROR;
  }
  return CF_EXEC_OK;
}

cf_exec_status_t cf_exec(parity_device_t *dev, const cf_op_t *op, uint8_t sentinel, cf_host_t *outputs, char *msg,
                         size_t n) {
  slot_t slots[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
  memset(slots, 0, sizeof slots);
  uint32_t total = op->nin + op->nout;
  cf_exec_status_t result = CF_EXEC_OK;
  msg[0] = 0;
  for (uint32_t i = 0; i < op->nout; i++) memset(&outputs[i], 0, sizeof outputs[i]);

  for (uint32_t k = 0; k < total && result == CF_EXEC_OK; k++)
    result = op->in_place && k == op->nin ? alias_slot(op, slots, msg, n)
                                          : stage_slot(dev, op, k, sentinel, &slots[k], msg, n);
  if (result == CF_EXEC_OK) result = run_slots(dev, op, slots, msg, n);
  for (uint32_t k = 0; k < total && (result == CF_EXEC_OK || result == CF_EXEC_CORRUPT); k++)
    if (slots[k].buf) result = read_back_slot(op, k, &slots[k], outputs, result, msg, n);

  for (uint32_t k = 0; k < total; k++) {
    if (slots[k].buf) parity_buffer_free(slots[k].buf);
    free(slots[k].image);
    free(slots[k].after);
  }
  if (result != CF_EXEC_OK && result != CF_EXEC_CORRUPT)
    for (uint32_t i = 0; i < op->nout; i++) cf_host_free(&outputs[i]);
  return result;
}
