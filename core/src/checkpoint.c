/* checkpoint.c — parameters and optimizer state in one safetensors file (parity_checkpoint_save and
 * parity_checkpoint_load, parity/safetensors.h), on the named-tensor writer and checks of
 * safetensors_tensors.c and the optimizer's state list (parity_optimizer_state, nn_optim.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "safetensors_internal.h"

#define OPT_KEY "parity.optimizer"

/* The file's names and tensors: the parameters, then the optimizer's state in its order. */
typedef struct ckpt_list {
  size_t n, nparams;
  const char **names;
  parity_tensor_t **tensors;
  char **owned; /* the optimizer entries' names */
} ckpt_list;

static void list_free(ckpt_list *l) {
  for (size_t i = l->nparams; l->owned && i < l->n; i++) free(l->owned[i]);
  free(l->owned);
  free(l->names);
  free(l->tensors);
}

static parity_status_t list_make(const char *call, const char *const *names, parity_tensor_t *const *params, size_t n,
                                 const parity_optimizer_t *opt, ckpt_list *l) {
  memset(l, 0, sizeof *l);
  parity_status_t st = parity__st_check_names(call, names, params, n);
  if (st != PARITY_STATUS_OK) return st;
  uint32_t ns = parity_optimizer_state_count(opt);
  size_t opt_params = 0; /* as far as its moments tell */
  for (uint32_t k = 0; k < ns; k++) {
    parity_optimizer_state_t s;
    if (parity_optimizer_state(opt, k, &s) == PARITY_STATUS_OK && s.param >= 0 && (size_t)s.param + 1 > opt_params)
      opt_params = (size_t)s.param + 1;
  }
  if (ns > 2 && opt_params != n)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: the optimizer has %zu parameters; %zu are named", call,
                        opt_params, n);
  for (size_t i = 0; i < n && opt; i++) {
    /* each parameter in the optimizer must be the one named at the same index */
    parity_optimizer_state_t s;
    for (uint32_t k = 2; k < ns; k++)
      if (parity_optimizer_state(opt, k, &s) == PARITY_STATUS_OK && s.param == (int32_t)i &&
          (parity_tensor_rank(s.tensor) != parity_tensor_rank(params[i]) ||
           parity_tensor_numel(s.tensor) != parity_tensor_numel(params[i])))
        return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                            "%s: params[%zu] (\"%s\") is not the optimizer's "
                            "parameter %zu (another shape): pass the parameters in the optimizer's order",
                            call, i, names[i], i);
  }
  l->nparams = n;
  l->n = n + ns;
  l->names = calloc(l->n ? l->n : 1, sizeof *l->names);
  l->tensors = calloc(l->n ? l->n : 1, sizeof *l->tensors);
  l->owned = calloc(l->n ? l->n : 1, sizeof *l->owned);
  if (!l->names || !l->tensors || !l->owned) {
    list_free(l);
    return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of host memory", call);
  }
  for (size_t i = 0; i < n; i++) {
    l->names[i] = names[i];
    l->tensors[i] = params[i];
  }
  for (uint32_t k = 0; k < ns; k++) {
    parity_optimizer_state_t s;
    parity_optimizer_state(opt, k, &s);
    size_t len = strlen(s.name) + (s.param >= 0 ? strlen(names[s.param]) + 1 : 0) + 16;
    char *nm = malloc(len);
    if (!nm) {
      list_free(l);
      return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of host memory", call);
    }
    if (s.param >= 0)
      snprintf(nm, len, "optimizer.%s.%s", names[s.param], s.name);
    else
      snprintf(nm, len, "optimizer.%s", s.name);
    l->owned[n + k] = nm;
    l->names[n + k] = nm;
    l->tensors[n + k] = s.tensor;
  }
  return PARITY_STATUS_OK;
}

parity_status_t parity_checkpoint_save(const char *path, const char *const *names, parity_tensor_t *const *params,
                                       size_t n, const parity_optimizer_t *opt, const char *const *meta_keys,
                                       const char *const *meta_values, size_t nmeta) {
  static const char call[] = "checkpoint_save";
  if (nmeta && (!meta_keys || !meta_values))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %zu metadata pairs but keys or values is NULL", call,
                        nmeta);
  for (size_t i = 0; i < nmeta; i++)
    if (meta_keys[i] && !strcmp(meta_keys[i], OPT_KEY))
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: the metadata key " OPT_KEY " is the checkpoint's own",
                          call);
  ckpt_list l;
  parity_status_t st = list_make(call, names, params, n, opt, &l);
  if (st != PARITY_STATUS_OK) return st;
  const char **keys = calloc(nmeta + 1, sizeof *keys), **vals = calloc(nmeta + 1, sizeof *vals);
  char desc[256];
  parity__optimizer_describe(opt, desc, sizeof desc);
  if (!keys || !vals) {
    st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of host memory", call);
  } else {
    for (size_t i = 0; i < nmeta; i++) keys[i] = meta_keys[i], vals[i] = meta_values[i];
    keys[nmeta] = OPT_KEY;
    vals[nmeta] = desc;
    st = parity_save_safetensors(path, l.names, l.tensors, l.n, keys, vals, nmeta + 1);
  }
  free(keys);
  free(vals);
  list_free(&l);
  return st;
}

/* A 0-d F32 or F64 entry (the optimizer's step and learning rate), as a double. */
static parity_status_t check_scalar(const char *call, const char *path, const parity_st_file *f, const char *name) {
  const parity_st_tensor *e = parity_st_find(f, name);
  if (!e) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s holds no tensor \"%s\"", call, path, name);
  if (e->rank != 0 || (strcmp(e->dtype, "F64") && strcmp(e->dtype, "F32")))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "%s: %s: \"%s\" must be a 0-d F64 or F32 tensor (it is %s of "
                        "rank %u)",
                        call, path, name, e->dtype, e->rank);
  return PARITY_STATUS_OK;
}

static double scalar_value(const parity_st_file *f, const char *name) {
  const parity_st_tensor *e = parity_st_find(f, name);
  const void *p = parity_st_data(f, e);
  if (!strcmp(e->dtype, "F64")) {
    double d;
    memcpy(&d, p, sizeof d);
    return d;
  }
  float x;
  memcpy(&x, p, sizeof x);
  return x;
}

static parity_status_t write_scalar(parity_tensor_t *t, double v) {
  if (parity_tensor_dtype(t) == PARITY_DTYPE_F64) return parity_tensor_write(t, &v, sizeof v);
  float x = (float)v;
  return parity_tensor_write(t, &x, sizeof x);
}

parity_status_t parity_checkpoint_load(const char *path, const char *const *names, parity_tensor_t *const *params,
                                       size_t n, parity_optimizer_t *opt, uint32_t flags) {
  static const char call[] = "checkpoint_load";
  if (!path) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: path is NULL", call);
  if (flags & ~(PARITY_LOAD_ALLOW_NONFINITE | PARITY_LOAD_ALLOW_EXTRA))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: unknown flags 0x%x", call,
                        flags & ~(PARITY_LOAD_ALLOW_NONFINITE | PARITY_LOAD_ALLOW_EXTRA));
  ckpt_list l;
  parity_status_t st = list_make(call, names, params, n, opt, &l);
  if (st != PARITY_STATUS_OK) return st;
  char err[512], desc[256];
  parity__optimizer_describe(opt, desc, sizeof desc);
  parity_st_file f;
  if (parity_st_open(path, &f, err, sizeof err)) {
    list_free(&l);
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s", call, err);
  }
  const char *saved = parity_st_metadata(&f, OPT_KEY);
  if (!saved)
    st = parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                      "%s: %s is not a checkpoint (no " OPT_KEY
                      " metadata; weights "
                      "alone load with parity_load_safetensors)",
                      call, path);
  else if (strcmp(saved, desc))
    st = parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                      "%s: %s holds the state of the optimizer \"%.120s\"; this one is "
                      "\"%s\" (create it with the same kind and hyper-parameters)",
                      call, path, saved, desc);
  if (st == PARITY_STATUS_OK && !(flags & PARITY_LOAD_ALLOW_EXTRA) && f.count != l.n)
    st = parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                      "%s: %s holds %u tensors; the parameters and optimizer state "
                      "are %zu (PARITY_LOAD_ALLOW_EXTRA allows others)",
                      call, path, f.count, l.n);
  uint32_t first_scalar = (uint32_t)n, scalars = opt && l.n > n ? 2 : 0;
  for (size_t i = 0; i < l.n && st == PARITY_STATUS_OK; i++)
    st = i >= first_scalar && i < first_scalar + scalars
             ? check_scalar(call, path, &f, l.names[i])
             : parity__st_check_entry(call, path, &f, l.names[i], l.tensors[i]);
  if (st == PARITY_STATUS_OK && parity_st_load(&f, err, sizeof err))
    st = parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s", call, err);
  for (size_t i = 0; i < l.n && st == PARITY_STATUS_OK && !(flags & PARITY_LOAD_ALLOW_NONFINITE); i++) {
    uint64_t first = 0, bad = parity_st_nonfinite(&f, parity_st_find(&f, l.names[i]), &first);
    if (bad)
      st = parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\" holds %llu NaN or infinite values (the "
                        "first at element %llu)",
                        call, path, l.names[i], (unsigned long long)bad, (unsigned long long)first);
  }
  for (size_t i = 0; i < l.n && st == PARITY_STATUS_OK; i++) {
    if (i >= first_scalar && i < first_scalar + scalars) {
      st = write_scalar(l.tensors[i], scalar_value(&f, l.names[i]));
    } else {
      const parity_st_tensor *e = parity_st_find(&f, l.names[i]);
      st = parity_tensor_write(l.tensors[i], parity_st_data(&f, e), e->end - e->begin);
    }
    if (st != PARITY_STATUS_OK) {
      char inner[384];
      snprintf(inner, sizeof inner, "%s", parity_last_error());
      st = parity__fail(st, "%s: writing \"%s\" to its device (the tensors before it were written): %s", call,
                        l.names[i], inner);
    }
  }
  parity_st_free(&f);
  list_free(&l);
  if (st == PARITY_STATUS_OK) parity__clear_error();
  return st;
}
