/* safetensors.c — the strict reader (the writer: safetensors_write.c). The header length is
 * checked against the file before the header is read, the header parser accepts exactly the JSON
 * the format needs, every length and offset is overflow-checked, and the data is read only after
 * the header was accepted. */
#define _POSIX_C_SOURCE 200809L
#include "parity/safetensors.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parity_support/cachefile.h"

#include "parity_support/parse.h"

#define fail psup_errorf

size_t parity_st_dtype_size(const char *d) {
  static const struct {
    const char *name;
    size_t size;
  } k[] = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2},
           {"I8", 1},  {"U64", 8}, {"U32", 4}, {"U16", 2},  {"U8", 1},  {"BOOL", 1}};
  for (size_t i = 0; i < sizeof k / sizeof *k; i++)
    if (!strcmp(d, k[i].name)) return k[i].size;
  return 0;
}

/* ---- a small strict JSON parser over the header bytes ------------------------------------- */
typedef struct jp {
  const char *start, *s, *end;
  char *err;
  size_t errlen;
  const char *path;
} jp;

static int jfail(jp *p, const char *what) {
  return fail(p->err, p->errlen, "%s: the header is not safetensors JSON: %s at byte %td of the header", p->path, what,
              p->s - p->start);
}

static void ws(jp *p) {
  while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

static int expect(jp *p, char c) {
  ws(p);
  if (p->s >= p->end || *p->s != c) {
    char what[32];
    snprintf(what, sizeof what, "expected '%c'", c);
    return jfail(p, what);
  }
  p->s++;
  return 0;
}

static int peek(jp *p, char c) {
  ws(p);
  return p->s < p->end && *p->s == c;
}

static int hex4(jp *p, unsigned *v) {
  *v = 0;
  for (int i = 0; i < 4; i++) {
    if (p->s >= p->end) return jfail(p, "\\u escape ends early");
    char c = *p->s++;
    *v <<= 4;
    if (c >= '0' && c <= '9')
      *v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      *v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      *v |= (unsigned)(c - 'A' + 10);
    else
      return jfail(p, "bad \\u escape");
  }
  return 0;
}

/* A JSON string as NUL-terminated UTF-8 (embedded NUL refused): into `fixed` (cap bytes; a longer
 * string fails with `too_long`), or, when fixed is NULL, into a freshly allocated *out. */
#define DROP(b) ((b) != fixed ? free(b) : (void)0)
static int jstring_in(jp *p, char *fixed, size_t cap, const char *too_long, char **out) {
  if (out) *out = NULL;
  if (expect(p, '"')) return -1;
  size_t n = 0;
  if (!fixed) cap = 16;
  char *b = fixed ? fixed : malloc(cap);
  if (!b) return jfail(p, "out of memory");
  for (;;) {
    if (p->s >= p->end) {
      DROP(b);
      return jfail(p, "string ends early");
    }
    unsigned char c = (unsigned char)*p->s++;
    unsigned cp;
    if (c == '"') break;
    if (c < 0x20) {
      DROP(b);
      return jfail(p, "control character in a string");
    }
    if (c != '\\') {
      cp = c; /* raw byte (UTF-8 passes through) */
    } else {
      if (p->s >= p->end) {
        DROP(b);
        return jfail(p, "string ends early");
      }
      char e = *p->s++;
      switch (e) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
          if (hex4(p, &cp)) {
            DROP(b);
            return -1;
          }
          if (cp >= 0xD800 && cp < 0xDC00) {
            unsigned lo;
            if (p->end - p->s < 2 || p->s[0] != '\\' || p->s[1] != 'u') {
              DROP(b);
              return jfail(p, "lone surrogate");
            }
            p->s += 2;
            if (hex4(p, &lo)) {
              DROP(b);
              return -1;
            }
            if (lo < 0xDC00 || lo > 0xDFFF) {
              DROP(b);
              return jfail(p, "lone surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            DROP(b);
            return jfail(p, "lone surrogate");
          }
          if (cp == 0) {
            DROP(b);
            return jfail(p, "NUL in a string");
          }
          break;
        default: DROP(b); return jfail(p, "bad escape");
      }
    }
    if (n + 5 > cap) {
      if (fixed) return jfail(p, too_long);
      cap *= 2;
      char *nb = realloc(b, cap);
      if (!nb) {
        DROP(b);
        return jfail(p, "out of memory");
      }
      b = nb;
    }
    if (c != '\\' || cp < 0x80)
      b[n++] = (char)cp;
    else if (cp < 0x800) {
      b[n++] = (char)(0xC0 | cp >> 6);
      b[n++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      b[n++] = (char)(0xE0 | cp >> 12);
      b[n++] = (char)(0x80 | (cp >> 6 & 0x3F));
      b[n++] = (char)(0x80 | (cp & 0x3F));
    } else {
      b[n++] = (char)(0xF0 | cp >> 18);
      b[n++] = (char)(0x80 | (cp >> 12 & 0x3F));
      b[n++] = (char)(0x80 | (cp >> 6 & 0x3F));
      b[n++] = (char)(0x80 | (cp & 0x3F));
    }
  }
  b[n] = 0;
  if (out) *out = b;
  return 0;
}
#undef DROP

static int jstring(jp *p, char **out) { return jstring_in(p, NULL, 0, NULL, out); }

/* A non-negative integer that fits in uint64 (no sign, fraction or exponent; no leading zeros). */
static int juint(jp *p, uint64_t *v) {
  ws(p);
  if (p->s >= p->end || *p->s < '0' || *p->s > '9') return jfail(p, "expected a non-negative integer");
  if (*p->s == '0' && p->end - p->s > 1 && p->s[1] >= '0' && p->s[1] <= '9') return jfail(p, "leading zero");
  uint64_t x = 0;
  while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
    unsigned d = (unsigned)(*p->s - '0');
    if (x > (UINT64_MAX - d) / 10) return jfail(p, "integer too large");
    x = x * 10 + d;
    p->s++;
  }
  if (p->s < p->end && (*p->s == '.' || *p->s == 'e' || *p->s == 'E')) return jfail(p, "expected an integer");
  *v = x;
  return 0;
}

/* [u, u, ...] with at most cap entries. */
static int juint_array(jp *p, uint64_t *v, uint32_t cap, uint32_t *n, const char *what) {
  *n = 0;
  if (expect(p, '[')) return -1;
  if (peek(p, ']')) {
    p->s++;
    return 0;
  }
  for (;;) {
    if (*n == cap) {
      char m[64];
      snprintf(m, sizeof m, "%s has more than %u entries", what, cap);
      return jfail(p, m);
    }
    if (juint(p, &v[(*n)++])) return -1;
    if (peek(p, ',')) {
      p->s++;
      continue;
    }
    return expect(p, ']');
  }
}

static int parse_tensor(jp *p, parity_st_tensor *t) {
  int have_dtype = 0, have_shape = 0, have_off = 0;
  if (expect(p, '{')) return -1;
  if (peek(p, '}')) return jfail(p, "empty tensor entry");
  for (;;) {
    char key[64], d[64]; /* no allocation per field: 100,000 tensors parse in a fraction of a second */
    if (jstring_in(p, key, sizeof key, "unknown or repeated field (a long name) in a tensor entry", NULL)) return -1;
    if (expect(p, ':')) return -1;
    int rc = 0;
    if (!strcmp(key, "dtype") && !have_dtype) {
      have_dtype = 1;
      if (jstring_in(p, d, sizeof d, "unknown dtype (a long name)", NULL))
        rc = -1;
      else if (strlen(d) >= sizeof t->dtype || !parity_st_dtype_size(d)) {
        fail(p->err, p->errlen, "%s: tensor \"%s\" has the unknown dtype \"%s\"", p->path, t->name, d);
        rc = -1;
      } else {
        strcpy(t->dtype, d);
      }
    } else if (!strcmp(key, "shape") && !have_shape) {
      have_shape = 1;
      rc = juint_array(p, t->shape, PARITY_ST_MAX_RANK, &t->rank, "shape");
    } else if (!strcmp(key, "data_offsets") && !have_off) {
      uint64_t o[2];
      uint32_t n;
      have_off = 1;
      rc = juint_array(p, o, 2, &n, "data_offsets");
      if (!rc && n != 2) rc = jfail(p, "data_offsets needs two entries");
      t->begin = o[0];
      t->end = o[1];
    } else {
      char m[PARITY_ST_MAX_NAME + 64];
      snprintf(m, sizeof m, "unknown or repeated field \"%.200s\" in tensor \"%.40s\"", key, t->name);
      rc = jfail(p, m);
    }
    if (rc) return -1;
    if (peek(p, ',')) {
      p->s++;
      continue;
    }
    if (expect(p, '}')) return -1;
    break;
  }
  if (!have_dtype || !have_shape || !have_off)
    return fail(p->err, p->errlen, "%s: tensor \"%s\" lacks %s", p->path, t->name,
                !have_dtype   ? "a dtype"
                : !have_shape ? "a shape"
                              : "data_offsets");
  return 0;
}

/* The checksum's value: exactly 16 lowercase hex digits, written without escapes. */
static int note_checksum(jp *p, parity_st_file *f, const char *raw, const char *raw_end, const char *v) {
  if (raw_end - raw != 18 || strlen(v) != 16 || strspn(v, "0123456789abcdef") != 16)
    return fail(p->err, p->errlen, "%s: the __metadata__ value of \"%s\" is not 16 hex digits", p->path,
                PARITY_ST_CHECKSUM_KEY);
  f->checksum_at = raw + 1 - p->start;
  f->checksum = strtoull(v, NULL, 16);
  return 0;
}

static int parse_metadata(jp *p, parity_st_file *f) {
  uint32_t cap = 0;
  if (expect(p, '{')) return -1;
  if (peek(p, '}')) {
    p->s++;
    return 0;
  }
  for (;;) {
    char *k, *v;
    if (jstring(p, &k)) return -1;
    if (expect(p, ':') || (!peek(p, '"') && jfail(p, "__metadata__ values must be strings"))) {
      free(k);
      return -1;
    }
    const char *raw = p->s;
    if (jstring(p, &v)) {
      free(k);
      return -1;
    }
    if (!strcmp(k, PARITY_ST_CHECKSUM_KEY) && note_checksum(p, f, raw, p->s, v)) {
      free(k);
      free(v);
      return -1;
    }
    if (f->meta_count == cap) {
      cap = cap ? 2 * cap : 8;
      char **nk = realloc(f->meta_keys, cap * sizeof *nk);
      if (nk) f->meta_keys = nk;
      char **nv = realloc(f->meta_values, cap * sizeof *nv);
      if (nv) f->meta_values = nv;
      if (!nk || !nv) {
        free(k);
        free(v);
        return jfail(p, "out of memory");
      }
    }
    f->meta_keys[f->meta_count] = k;
    f->meta_values[f->meta_count++] = v;
    if (peek(p, ',')) {
      p->s++;
      continue;
    }
    return expect(p, '}');
  }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The first name that appears twice among v[0..n), by sorting v (n log n); NULL if none. */
static const char *find_duplicate(const char **v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_str);
  for (uint32_t i = 1; i < n; i++)
    if (!strcmp(v[i - 1], v[i])) return v[i];
  return NULL;
}

static int parse_header(jp *p, parity_st_file *f) {
  int have_meta = 0;
  uint32_t cap = 0;
  if (expect(p, '{')) return -1;
  if (!peek(p, '}')) {
    for (;;) {
      char name[PARITY_ST_MAX_NAME + 4]; /* + 4: jstring_in keeps room for a 4-byte character */
      if (jstring_in(p, name, sizeof name, "tensor name empty or too long", NULL)) return -1;
      if (expect(p, ':')) return -1;
      if (!strcmp(name, "__metadata__")) {
        if (have_meta) return jfail(p, "__metadata__ appears twice");
        have_meta = 1;
        if (parse_metadata(p, f)) return -1;
      } else {
        if (!name[0] || strlen(name) >= PARITY_ST_MAX_NAME) return jfail(p, "tensor name empty or too long");
        if (f->count == cap) {
          cap = cap ? cap * 2 : 8;
          parity_st_tensor *nt = realloc(f->tensors, cap * sizeof *nt);
          if (!nt) return jfail(p, "out of memory");
          f->tensors = nt;
        }
        parity_st_tensor *t = &f->tensors[f->count++];
        memset(t, 0, sizeof *t);
        strcpy(t->name, name);
        if (parse_tensor(p, t)) return -1;
      }
      if (peek(p, ',')) {
        p->s++;
        continue;
      }
      break;
    }
  }
  if (expect(p, '}')) return -1;
  ws(p);
  if (p->s != p->end) return jfail(p, "bytes after the JSON object");
  uint32_t most = f->count > f->meta_count ? f->count : f->meta_count;
  const char **names = malloc((most ? most : 1) * sizeof *names);
  if (!names) return jfail(p, "out of memory");
  for (uint32_t i = 0; i < f->meta_count; i++) names[i] = f->meta_keys[i];
  const char *dup = find_duplicate(names, f->meta_count);
  int rc = 0;
  if (dup) rc = fail(p->err, p->errlen, "%s: duplicate __metadata__ key \"%.200s\"", p->path, dup);
  for (uint32_t i = 0; i < f->count; i++) names[i] = f->tensors[i].name;
  if (!rc && (dup = find_duplicate(names, f->count)))
    rc = fail(p->err, p->errlen, "%s: tensor \"%s\" appears twice in the header", p->path, dup);
  free(names);
  return rc;
}

static int cmp_begin(const void *a, const void *b) {
  const parity_st_tensor *x = *(const parity_st_tensor *const *)a, *y = *(const parity_st_tensor *const *)b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

static int validate(parity_st_file *f, const char *path, char *err, size_t errlen) {
  uint64_t buf = f->size - f->data_start;
  for (uint32_t i = 0; i < f->count; i++) {
    const parity_st_tensor *t = &f->tensors[i];
    uint64_t numel = 1, esize = parity_st_dtype_size(t->dtype);
    for (uint32_t d = 0; d < t->rank; d++) {
      if (t->shape[d] && numel > UINT64_MAX / t->shape[d])
        return fail(err, errlen, "%s: tensor \"%s\": the shape overflows", path, t->name);
      numel *= t->shape[d];
    }
    if (numel > UINT64_MAX / esize) return fail(err, errlen, "%s: tensor \"%s\": the shape overflows", path, t->name);
    if (t->end < t->begin)
      return fail(err, errlen, "%s: tensor \"%s\": data_offsets [%llu, %llu] end before they begin", path, t->name,
                  (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end > buf)
      return fail(err, errlen, "%s: tensor \"%s\": data_offsets [%llu, %llu] lie outside the %llu-byte data buffer",
                  path, t->name, (unsigned long long)t->begin, (unsigned long long)t->end, (unsigned long long)buf);
    if (t->end - t->begin != numel * esize)
      return fail(err, errlen, "%s: tensor \"%s\": %llu bytes for %llu elements of %s (expected %llu)", path, t->name,
                  (unsigned long long)(t->end - t->begin), (unsigned long long)numel, t->dtype,
                  (unsigned long long)(numel * esize));
  }
  /* The ranges must tile the buffer: sorted by start, each begins where the previous ended. */
  const parity_st_tensor **order = malloc((f->count ? f->count : 1) * sizeof *order);
  if (!order) return fail(err, errlen, "%s: out of memory", path);
  for (uint32_t i = 0; i < f->count; i++) order[i] = &f->tensors[i];
  qsort(order, f->count, sizeof *order, cmp_begin);
  uint64_t at = 0;
  int rc = 0;
  for (uint32_t i = 0; i < f->count && !rc; i++) {
    if (order[i]->begin < at)
      rc = fail(err, errlen, "%s: tensors \"%s\" and \"%s\" overlap (bytes %llu..%llu)", path, order[i - 1]->name,
                order[i]->name, (unsigned long long)order[i]->begin, (unsigned long long)at);
    else if (order[i]->begin > at)
      rc = fail(err, errlen, "%s: bytes %llu..%llu of the data buffer belong to no tensor", path,
                (unsigned long long)at, (unsigned long long)order[i]->begin);
    at = order[i]->end;
  }
  if (!rc && at != buf)
    rc = fail(err, errlen, "%s: bytes %llu..%llu at the end of the data buffer belong to no tensor", path,
              (unsigned long long)at, (unsigned long long)buf);
  free(order);
  return rc;
}

/* pread exactly n bytes at off; 0, or -1 with errno (0: the file ended first). */
static int read_at(int fd, void *dst, size_t n, uint64_t off) {
  size_t got = 0;
  while (got < n) {
    size_t chunk = n - got > ((size_t)1 << 30) ? ((size_t)1 << 30) : n - got;
    ssize_t r = pread(fd, (uint8_t *)dst + got, chunk, (off_t)(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = 0;
      return -1;
    }
    got += (size_t)r;
  }
  return 0;
}

static int open_fail(parity_st_file *f, char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  parity_st_free(f);
  return -1;
}

static const char *kind_of(mode_t m) {
  return S_ISDIR(m)                 ? "a folder"
         : S_ISFIFO(m)              ? "a FIFO"
         : S_ISCHR(m) || S_ISBLK(m) ? "a device"
         : S_ISSOCK(m)              ? "a socket"
                                    : "special";
}

int parity_st_open(const char *path, parity_st_file *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->fd = -1;
  out->checksum_at = -1;
  /* non-blocking: opening a FIFO for reading must not wait for a writer */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
  out->fd = fd;
  if (!(out->path = strdup(path))) return open_fail(out, err, errlen, "%s: out of memory", path);
  struct stat st;
  if (fstat(fd, &st) != 0) return open_fail(out, err, errlen, "%s: cannot read: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return open_fail(out, err, errlen, "%s: not a regular file (it is %s)", path, kind_of(st.st_mode));
  out->size = (uint64_t)st.st_size;
  if (out->size < 8)
    return open_fail(out, err, errlen, "%s: truncated: %llu bytes, shorter than the 8-byte header length", path,
                     (unsigned long long)out->size);
  uint8_t len[8];
  if (read_at(fd, len, 8, 0))
    return open_fail(out, err, errlen, "%s: cannot read: %s", path, errno ? strerror(errno) : "the file shrank");
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | len[i];
  if (n > PARITY_ST_MAX_HEADER)
    return open_fail(out, err, errlen,
                     "%s: header length %llu exceeds the format's limit of %u bytes (not a safetensors file?)", path,
                     (unsigned long long)n, PARITY_ST_MAX_HEADER);
  if (n > out->size - 8)
    return open_fail(out, err, errlen, "%s: truncated: the header claims %llu bytes but only %llu follow", path,
                     (unsigned long long)n, (unsigned long long)(out->size - 8));
  out->data_start = 8 + n;
  if (!(out->header = malloc(n ? (size_t)n : 1)))
    return open_fail(out, err, errlen, "%s: out of memory for a %llu-byte header", path, (unsigned long long)n);
  if (read_at(fd, out->header, (size_t)n, 8))
    return open_fail(out, err, errlen, "%s: cannot read the header: %s", path,
                     errno ? strerror(errno) : "the file shrank");
  const char *h = (const char *)out->header;
  if (n == 0 || h[0] != '{')
    return open_fail(out, err, errlen, "%s: the header is not a JSON object (it does not start with '{')", path);
  jp p = {.start = h, .s = h, .end = h + n, .err = err, .errlen = errlen, .path = path};
  if (parse_header(&p, out) || validate(out, path, err, errlen)) {
    parity_st_free(out);
    return -1;
  }
  return 0;
}

static uint64_t checksum_of(const parity_st_file *f) {
  uint8_t len[8];
  uint64_t n = f->data_start - 8;
  for (int i = 0; i < 8; i++) len[i] = (uint8_t)(n >> (8 * i));
  uint64_t h = psup_fnv1a(PSUP_FNV_SEED, len, 8);
  size_t at = (size_t)f->checksum_at;
  h = psup_fnv1a(h, f->header, at);
  h = psup_fnv1a(h, "0000000000000000", 16);
  h = psup_fnv1a(h, f->header + at + 16, (size_t)n - at - 16);
  return psup_fnv1a(h, f->body, (size_t)(f->size - f->data_start));
}

int parity_st_load(parity_st_file *f, char *err, size_t errlen) {
  uint64_t n = f->size - f->data_start;
  if (n > SIZE_MAX - 1 || !(f->body = malloc(n ? (size_t)n : 1)))
    return fail(err, errlen, "%s: out of memory for %llu bytes of tensor data", f->path, (unsigned long long)n);
  if (read_at(f->fd, f->body, (size_t)n, f->data_start))
    return fail(err, errlen, "%s: cannot read the tensor data: %s", f->path,
                errno ? strerror(errno) : "the file shrank while it was read");
  if (f->checksum_at >= 0) {
    uint64_t h = checksum_of(f);
    if (h != f->checksum)
      return fail(err, errlen,
                  "%s: checksum mismatch: the file states %016llx, its bytes give %016llx: the file was cut, mixed "
                  "with another or changed after it was written",
                  f->path, (unsigned long long)f->checksum, (unsigned long long)h);
  }
  return 0;
}

int parity_st_read(const char *path, parity_st_file *out, char *err, size_t errlen) {
  if (parity_st_open(path, out, err, errlen)) return -1;
  if (parity_st_load(out, err, errlen)) {
    parity_st_free(out);
    return -1;
  }
  return 0;
}

const parity_st_tensor *parity_st_find(const parity_st_file *f, const char *name) {
  for (uint32_t i = 0; i < f->count; i++)
    if (!strcmp(f->tensors[i].name, name)) return &f->tensors[i];
  return NULL;
}

const void *parity_st_data(const parity_st_file *f, const parity_st_tensor *t) { return f->body + t->begin; }

const char *parity_st_metadata(const parity_st_file *f, const char *key) {
  for (uint32_t i = 0; i < f->meta_count; i++)
    if (!strcmp(f->meta_keys[i], key)) return f->meta_values[i];
  return NULL;
}

uint64_t parity_st_nonfinite(const parity_st_file *f, const parity_st_tensor *t, uint64_t *first) {
  size_t es = parity_st_dtype_size(t->dtype);
  uint64_t mask;
  if (!strcmp(t->dtype, "F64"))
    mask = 0x7FF0000000000000ull;
  else if (!strcmp(t->dtype, "F32"))
    mask = 0x7F800000u;
  else if (!strcmp(t->dtype, "F16"))
    mask = 0x7C00u;
  else if (!strcmp(t->dtype, "BF16"))
    mask = 0x7F80u;
  else
    return 0;
  const uint8_t *b = parity_st_data(f, t);
  uint64_t count = 0, n = (t->end - t->begin) / es;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t v = 0;
    for (size_t k = 0; k < es; k++) v |= (uint64_t)b[i * es + k] << (8 * k); /* little-endian */
    if ((v & mask) == mask && !count++) *first = i;
  }
  return count;
}

void parity_st_free(parity_st_file *f) {
  for (uint32_t i = 0; i < f->meta_count; i++) {
    free(f->meta_keys[i]);
    free(f->meta_values[i]);
  }
  free(f->meta_keys);
  free(f->meta_values);
  free(f->tensors);
  free(f->header);
  free(f->body);
  free(f->path);
  if (f->fd >= 0) close(f->fd);
  memset(f, 0, sizeof *f);
  f->fd = -1;
  f->checksum_at = -1;
}
