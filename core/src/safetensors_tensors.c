/* safetensors_tensors.c — named parity tensors to and from safetensors files (parity/safetensors.h),
 * on the strict reader (safetensors_read.c) and the atomic writer (safetensors_write.c). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "parity/safetensors.h"
#include "parity_support/atomic_file.h"
#include "safetensors_internal.h"
#include "tensor_internal.h"

static const struct {
  parity_dtype_t dtype;
  const char *name;
} st_names[] = {{PARITY_DTYPE_F64, "F64"},   {PARITY_DTYPE_F32, "F32"}, {PARITY_DTYPE_F16, "F16"},
                {PARITY_DTYPE_BF16, "BF16"}, {PARITY_DTYPE_I32, "I32"}, {PARITY_DTYPE_I64, "I64"},
                {PARITY_DTYPE_BOOL, "BOOL"}};

const char *parity_st_dtype_name(parity_dtype_t dtype) {
  for (size_t i = 0; i < sizeof st_names / sizeof *st_names; i++)
    if (st_names[i].dtype == dtype) return st_names[i].name;
  return NULL;
}

parity_dtype_t parity_st_dtype_parse(const char *name) {
  for (size_t i = 0; name && i < sizeof st_names / sizeof *st_names; i++)
    if (!strcmp(st_names[i].name, name)) return st_names[i].dtype;
  return PARITY_DTYPE_INVALID;
}

/* The names: present, non-empty, distinct; the arrays present. */
parity_status_t parity__st_check_names(const char *call, const char *const *names, parity_tensor_t *const *tensors,
                                       size_t n) {
  if (n && (!names || !tensors))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: names or tensors is NULL", call);
  if (n > UINT32_MAX) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %zu tensors is too many", call, n);
  for (size_t i = 0; i < n; i++) {
    if (!names[i] || !names[i][0])
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: names[%zu] is %s", call, i, names[i] ? "empty" : "NULL");
    if (strlen(names[i]) >= PARITY_ST_MAX_NAME)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: names[%zu] is longer than %d bytes", call, i,
                          PARITY_ST_MAX_NAME - 1);
    if (!tensors[i])
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: tensors[%zu] (\"%s\") is NULL", call, i, names[i]);
    for (size_t j = 0; j < i; j++)
      if (!strcmp(names[i], names[j]))
        return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: the name \"%s\" is given twice (names[%zu] and [%zu])",
                            call, names[i], j, i);
  }
  return PARITY_STATUS_OK;
}

static size_t dtype_bytes(parity_dtype_t dt) { return parity_st_dtype_size(parity_st_dtype_name(dt)); }

parity_status_t parity_save_safetensors(const char *path, const char *const *names, parity_tensor_t *const *tensors,
                                        size_t n, const char *const *meta_keys, const char *const *meta_values,
                                        size_t nmeta) {
  static const char call[] = "save_safetensors";
  if (!path) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: path is NULL", call);
  parity_status_t st = parity__st_check_names(call, names, tensors, n);
  if (st != PARITY_STATUS_OK) return st;
  if (nmeta && (!meta_keys || !meta_values))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %zu metadata pairs but keys or values is NULL", call,
                        nmeta);
  if (nmeta > UINT32_MAX) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: too many metadata pairs", call);
  char err[512];
  if (psup_atomic_check(path, err, sizeof err))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s", call, err);
  for (size_t i = 0; i < n; i++) {
    if (!parity_st_dtype_name(parity_tensor_dtype(tensors[i])))
      return parity__fail(PARITY_STATUS_UNSUPPORTED, "%s: tensor \"%s\" has a dtype safetensors cannot hold here", call,
                          names[i]);
    if (parity_tensor_rank(tensors[i]) > PARITY_ST_MAX_RANK)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: tensor \"%s\" has rank %u (at most %d)", call, names[i],
                          parity_tensor_rank(tensors[i]), PARITY_ST_MAX_RANK);
  }
  parity_st_entry *e = calloc(n ? n : 1, sizeof *e);
  uint64_t *shapes = calloc(n ? n * PARITY_ST_MAX_RANK : 1, sizeof *shapes);
  void **bufs = calloc(n ? n : 1, sizeof *bufs);
  st = e && shapes && bufs ? PARITY_STATUS_OK : parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of memory", call);
  for (size_t i = 0; i < n && st == PARITY_STATUS_OK; i++) {
    parity_tensor_t *t = tensors[i];
    uint64_t bytes = (uint64_t)parity_tensor_numel(t) * dtype_bytes(parity_tensor_dtype(t));
    bufs[i] = malloc(bytes ? (size_t)bytes : 1);
    if (!bufs[i]) {
      st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of memory for \"%s\" (%llu bytes)", call, names[i],
                        (unsigned long long)bytes);
      break;
    }
    st = parity_tensor_to_host(t, bufs[i], bytes);
    if (st != PARITY_STATUS_OK) {
      char inner[384];
      snprintf(inner, sizeof inner, "%s", parity_last_error());
      st = parity__fail(st, "%s: reading \"%s\": %s", call, names[i], inner);
      break;
    }
    uint32_t rank = parity_tensor_rank(t);
    const int64_t *shape = parity_tensor_shape(t);
    for (uint32_t d = 0; d < rank; d++) shapes[i * PARITY_ST_MAX_RANK + d] = (uint64_t)shape[d];
    e[i] = (parity_st_entry){.name = names[i],
                             .dtype = parity_st_dtype_name(parity_tensor_dtype(t)),
                             .rank = rank,
                             .shape = shapes + i * PARITY_ST_MAX_RANK,
                             .data = bufs[i]};
  }
  if (st == PARITY_STATUS_OK &&
      parity_st_save(path, e, (uint32_t)n, meta_keys, meta_values, (uint32_t)nmeta, err, sizeof err))
    st = parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s", call, err);
  for (size_t i = 0; bufs && i < n; i++) free(bufs[i]);
  free(bufs);
  free(shapes);
  free(e);
  if (st == PARITY_STATUS_OK) parity__clear_error();
  return st;
}

parity_status_t parity__st_check_entry(const char *call, const char *path, const parity_st_file *f, const char *name,
                                       const parity_tensor_t *t) {
  const parity_st_tensor *e = parity_st_find(f, name);
  if (!e) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s holds no tensor \"%s\"", call, path, name);
  const char *want = parity_st_dtype_name(parity_tensor_dtype(t));
  if (!want || strcmp(want, e->dtype))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s: tensor \"%s\" is %s; the tensor to load it into is %s",
                        call, path, name, e->dtype, want ? want : "of a dtype safetensors cannot hold here");
  uint32_t rank = parity_tensor_rank(t);
  const int64_t *shape = parity_tensor_shape(t);
  int same = e->rank == rank;
  for (uint32_t d = 0; same && d < rank; d++) same = e->shape[d] == (uint64_t)shape[d];
  if (same && !parity_tensor_is_contiguous(t))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: the tensor to load \"%s\" into is a non-contiguous view",
                        call, name);
  if (same && t->st->plan_fills)
    return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "%s: the tensor to load \"%s\" into is refilled by a plan "
                        "on every replay (filled while the plan recorded), so the load would be undone",
                        call, name);
  if (same) return PARITY_STATUS_OK;
  char got[160] = "", need[160] = "";
  for (uint32_t d = 0; d < e->rank; d++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", d ? ", " : "", (unsigned long long)e->shape[d]);
  for (uint32_t d = 0; d < rank; d++)
    snprintf(need + strlen(need), sizeof need - strlen(need), "%s%lld", d ? ", " : "", (long long)shape[d]);
  return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                      "%s: %s: tensor \"%s\" has shape [%s]; the tensor to load it into has [%s]", call, path, name,
                      got, need);
}

parity_status_t parity_load_safetensors(const char *path, const char *const *names, parity_tensor_t *const *tensors,
                                        size_t n, uint32_t flags) {
  static const char call[] = "load_safetensors";
  if (!path) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: path is NULL", call);
  if (flags & ~(PARITY_LOAD_ALLOW_NONFINITE | PARITY_LOAD_ALLOW_EXTRA))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: unknown flags 0x%x", call,
                        flags & ~(PARITY_LOAD_ALLOW_NONFINITE | PARITY_LOAD_ALLOW_EXTRA));
  parity_status_t st = parity__st_check_names(call, names, tensors, n);
  if (st != PARITY_STATUS_OK) return st;
  char err[512];
  parity_st_file f;
  if (parity_st_open(path, &f, err, sizeof err))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s", call, err);
  /* the header first: a file of other tensors is refused before its data is read */
  if (!(flags & PARITY_LOAD_ALLOW_EXTRA) && f.count != n)
    st = parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                      "%s: %s holds %u tensors; %zu were asked for "
                      "(PARITY_LOAD_ALLOW_EXTRA loads a subset)",
                      call, path, f.count, n);
  for (size_t i = 0; i < n && st == PARITY_STATUS_OK; i++)
    st = parity__st_check_entry(call, path, &f, names[i], tensors[i]);
  if (st == PARITY_STATUS_OK && parity_st_load(&f, err, sizeof err))
    st = parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s", call, err);
  for (size_t i = 0; i < n && st == PARITY_STATUS_OK && !(flags & PARITY_LOAD_ALLOW_NONFINITE); i++) {
    uint64_t first = 0, bad = parity_st_nonfinite(&f, parity_st_find(&f, names[i]), &first);
    if (bad)
      st = parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\" holds %llu NaN or infinite values (the "
                        "first at element %llu); PARITY_LOAD_ALLOW_NONFINITE loads them anyway",
                        call, path, names[i], (unsigned long long)bad, (unsigned long long)first);
  }
  for (size_t i = 0; i < n && st == PARITY_STATUS_OK; i++) {
    const parity_st_tensor *e = parity_st_find(&f, names[i]);
    st = parity_tensor_write(tensors[i], parity_st_data(&f, e), e->end - e->begin);
    if (st != PARITY_STATUS_OK) {
      char inner[384];
      snprintf(inner, sizeof inner, "%s", parity_last_error());
      st = parity__fail(st, "%s: writing \"%s\" to its device (the tensors before it were written): %s", call, names[i],
                        inner);
    }
  }
  parity_st_free(&f);
  if (st == PARITY_STATUS_OK) parity__clear_error();
  return st;
}
