/* parity/safetensors.h — saving and loading named tensors in the safetensors format
 * (https://github.com/huggingface/safetensors), the format PyTorch, JAX and ggml tools read: an
 * 8-byte little-endian header length N, N bytes of JSON header {name: {dtype, shape,
 * data_offsets}, optional "__metadata__": {string: string}}, then the tensor bytes, little-endian,
 * row-major.
 *
 * Two levels:
 *   - parity_save_safetensors / parity_load_safetensors: named parity tensors to and from a file
 *     (a training program's weights). Status and parity_last_error() as everywhere in parity.
 *   - parity_st_*: the strict reader and the writer on host bytes (tools, converters), with the
 *     reason of a failure in a caller's buffer. Independent of any context or device.
 * Every write goes through an atomic writer (a temporary file beside the target, fsynced, renamed
 * over it): killed or failing at any point, the target is the old file or the new one. */
#ifndef PARITY_SAFETENSORS_H
#define PARITY_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "parity/parity.h"
#include "parity/tensor.h"

#ifdef __cplusplus
extern "C" {
#ifdef __cplusplus
}
#endif

#endif

/* ---- named tensors ---------------------------------------------------------------------- */
/* Write tensors[i] under names[i] (n of them, any device, any layout: each is read back to the
 * host), with nmeta string metadata pairs (may be 0 and NULL) and parity's checksum. dtypes f64,
 * f32, f16, bf16, i32, i64 and bool (F64 ... BOOL in the file). A duplicate or empty name, a
 * tensor that holds no value yet, or a target that is a folder, device or FIFO is refused before
 * anything is written. */
PARITY_API parity_status_t parity_save_safetensors(const char *path, const char *const *names,
                                                   parity_tensor_t *const *tensors, size_t n,
                                                   const char *const *meta_keys, const char *const *meta_values,
                                                   size_t nmeta);

/* flags of parity_load_safetensors */
#define PARITY_LOAD_ALLOW_NONFINITE 1u /* load NaN and infinite values (refused by default) */
#define PARITY_LOAD_ALLOW_EXTRA \
  2u /* the file may hold tensors not asked for (by default it
                                          must hold exactly the names given) */

/* Read the file (strictly: see parity_st_open) and write the tensor stored under names[i] into
 * tensors[i], which must have its dtype and shape. Every name, dtype, shape and value is checked
 * before any tensor is written, so a refused file leaves every tensor as it was. A file that
 * states parity's checksum is verified; one without it (another writer's) is read unchecked. */
PARITY_API parity_status_t parity_load_safetensors(const char *path, const char *const *names,
                                                   parity_tensor_t *const *tensors, size_t n, uint32_t flags);

/* ---- checkpoints: parameters and optimizer state in one file ------------------------------ */
/* Write params[i] under names[i] and the whole state of opt (may be NULL) in one safetensors file,
 * atomically (as parity_save_safetensors): "optimizer.step", "optimizer.lr" and, per parameter,
 * "optimizer.<name>.exp_avg" / ".exp_avg_sq" (Adam, AdamW) or ".momentum_buffer" (SGD with
 * momentum), as parity_optimizer_state lists them. The metadata key "parity.optimizer" records the
 * optimizer's kind and hyper-parameters; the caller's nmeta pairs are added (a training program's
 * own position: epoch, batch, seed; read them back with parity_st_open and parity_st_metadata).
 * Resuming from it with the same program gives bit for bit the steps of a run never stopped. */
PARITY_API parity_status_t parity_checkpoint_save(const char *path, const char *const *names,
                                                  parity_tensor_t *const *params, size_t n,
                                                  const parity_optimizer_t *opt, const char *const *meta_keys,
                                                  const char *const *meta_values, size_t nmeta);
/* Load a checkpoint into params and opt (NULL: the file must hold no optimizer state), which must
 * be made the same way: the same optimizer kind and hyper-parameters, the parameters' names, dtypes
 * and shapes. The step and learning rate are converted to opt's scalar dtype (a checkpoint of a
 * float64 device resumes on one without float64). Everything is checked before anything is
 * written; flags as parity_load_safetensors (PARITY_LOAD_ALLOW_EXTRA: other tensors may be in the
 * file). */
PARITY_API parity_status_t parity_checkpoint_load(const char *path, const char *const *names,
                                                  parity_tensor_t *const *params, size_t n, parity_optimizer_t *opt,
                                                  uint32_t flags);

/* The safetensors name of a parity dtype ("F32", ...), NULL for none; and back (INVALID). */
PARITY_API const char *parity_st_dtype_name(parity_dtype_t dtype);
PARITY_API parity_dtype_t parity_st_dtype_parse(const char *name);

/* ---- the reader and writer on host bytes ------------------------------------------------ */

#define PARITY_ST_MAX_RANK 8
#define PARITY_ST_MAX_NAME 256
#define PARITY_ST_MAX_HEADER (100u << 20) /* the reference implementation's limit */

typedef struct parity_st_tensor {
  char name[PARITY_ST_MAX_NAME];
  char dtype[8]; /* "F32", "BF16", ... */
  uint32_t rank;
  uint64_t shape[PARITY_ST_MAX_RANK];
  uint64_t begin, end; /* byte offsets into the data buffer */
} parity_st_tensor;

/* The checksum parity writes into __metadata__: FNV-1a 64 (parity_support/cachefile.h) of the
 * whole file (8-byte length, header, data) with the value's 16 hex digits read as '0', as 16
 * lowercase hex digits. Files without it (other writers) are read unchecked. */
#define PARITY_ST_CHECKSUM_KEY "parity.checksum"

typedef struct parity_st_file {
  char *path;          /* for messages */
  int fd;              /* open from parity_st_open to parity_st_free (-1 otherwise) */
  uint64_t size;       /* of the file */
  uint64_t data_start; /* 8 + N */
  uint8_t *header;     /* the N header bytes (the checksum covers them) */
  uint8_t *body;       /* the data buffer, size - data_start bytes; NULL before parity_st_load */
  parity_st_tensor *tensors;
  uint32_t count;
  char **meta_keys, **meta_values;
  uint32_t meta_count;
  int64_t checksum_at; /* offset in the header of the checksum's hex digits; -1: the file has none */
  uint64_t checksum;   /* the value the file states */
} parity_st_file;

/* Bytes per element of a safetensors dtype name, 0 for a name it does not know. */
PARITY_API size_t parity_st_dtype_size(const char *dtype);

/* Open `path` and read and validate only its header: refuses anything but a regular file (a FIFO
 * never blocks: it is opened non-blocking and refused), a file shorter than 8 bytes, a header
 * length over PARITY_ST_MAX_HEADER or past the end of the file (both before the header is read), a
 * header that is not a JSON object of the shape above (unknown or missing fields, wrong types,
 * trailing bytes), duplicate names (found by sorting), an unknown dtype, a byte size that is not
 * numel * element size, offsets outside the data buffer, overlapping ranges, bytes no tensor
 * covers, and a malformed PARITY_ST_CHECKSUM_KEY. 0, or -1 with the reason in err (nothing to free). */
PARITY_API int parity_st_open(const char *path, parity_st_file *out, char *err, size_t errlen);
/* Read the data buffer (only after the header was accepted) and, if the file states a checksum,
 * verify it: a file cut, mixed with another or changed is refused. 0, or -1 with the reason. */
PARITY_API int parity_st_load(parity_st_file *f, char *err, size_t errlen);
/* parity_st_open then parity_st_load. */
PARITY_API int parity_st_read(const char *path, parity_st_file *out, char *err, size_t errlen);
PARITY_API const parity_st_tensor *parity_st_find(const parity_st_file *f, const char *name);
/* The tensor's bytes (after parity_st_load). */
PARITY_API const void *parity_st_data(const parity_st_file *f, const parity_st_tensor *t);
PARITY_API const char *parity_st_metadata(const parity_st_file *f, const char *key);
/* How many elements of a float tensor (F64, F32, F16, BF16) are NaN or infinite (after parity_st_load);
 * *first gets the index of the first one. 0 for other dtypes. */
PARITY_API uint64_t parity_st_nonfinite(const parity_st_file *f, const parity_st_tensor *t, uint64_t *first);
PARITY_API void parity_st_free(parity_st_file *f);

typedef struct parity_st_entry {
  const char *name, *dtype;
  uint32_t rank;
  const uint64_t *shape;
  const void *data; /* numel * parity_st_dtype_size(dtype) bytes */
} parity_st_entry;

/* Write the tensors, in order, with string metadata (nmeta pairs) and PARITY_ST_CHECKSUM_KEY, to `path`
 * through the atomic writer (parity_support/atomic_file.h: a temporary file beside it, fsynced,
 * renamed over it): killed or failing at any point, `path` is the old file or the new one.
 * 0, or -1 with the reason in err. */
PARITY_API int parity_st_save(const char *path, const parity_st_entry *entries, uint32_t n,
                              const char *const *meta_keys, const char *const *meta_values, uint32_t nmeta, char *err,
                              size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
