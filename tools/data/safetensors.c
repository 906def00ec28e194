/* safetensors.c — writer and strict reader; the header parser accepts exactly the JSON the format
 * needs and every length and offset is overflow-checked. */
#define _POSIX_C_SOURCE 200809L
#include "safetensors.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

size_t st_dtype_size(const char *d) {
  static const struct { const char *name; size_t size; } k[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2},
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
    if (c >= '0' && c <= '9') *v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') *v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') *v |= (unsigned)(c - 'A' + 10);
    else return jfail(p, "bad \\u escape");
  }
  return 0;
}

/* A JSON string into a freshly allocated, NUL-terminated UTF-8 buffer (embedded NUL refused). */
static int jstring(jp *p, char **out) {
  *out = NULL;
  if (expect(p, '"')) return -1;
  size_t cap = 16, n = 0;
  char *b = malloc(cap);
  if (!b) return jfail(p, "out of memory");
  for (;;) {
    if (p->s >= p->end) { free(b); return jfail(p, "string ends early"); }
    unsigned char c = (unsigned char)*p->s++;
    unsigned cp;
    if (c == '"') break;
    if (c < 0x20) { free(b); return jfail(p, "control character in a string"); }
    if (c != '\\') {
      cp = c; /* raw byte (UTF-8 passes through) */
    } else {
      if (p->s >= p->end) { free(b); return jfail(p, "string ends early"); }
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
        if (hex4(p, &cp)) { free(b); return -1; }
        if (cp >= 0xD800 && cp < 0xDC00) {
          unsigned lo;
          if (p->end - p->s < 2 || p->s[0] != '\\' || p->s[1] != 'u') { free(b); return jfail(p, "lone surrogate"); }
          p->s += 2;
          if (hex4(p, &lo)) { free(b); return -1; }
          if (lo < 0xDC00 || lo > 0xDFFF) { free(b); return jfail(p, "lone surrogate"); }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          free(b);
          return jfail(p, "lone surrogate");
        }
        if (cp == 0) { free(b); return jfail(p, "NUL in a string"); }
        break;
      default: free(b); return jfail(p, "bad escape");
      }
    }
    if (n + 5 > cap) {
      cap *= 2;
      char *nb = realloc(b, cap);
      if (!nb) { free(b); return jfail(p, "out of memory"); }
      b = nb;
    }
    if (c != '\\' || cp < 0x80) b[n++] = (char)cp;
    else if (cp < 0x800) { b[n++] = (char)(0xC0 | cp >> 6); b[n++] = (char)(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) {
      b[n++] = (char)(0xE0 | cp >> 12); b[n++] = (char)(0x80 | (cp >> 6 & 0x3F)); b[n++] = (char)(0x80 | (cp & 0x3F));
    } else {
      b[n++] = (char)(0xF0 | cp >> 18); b[n++] = (char)(0x80 | (cp >> 12 & 0x3F));
      b[n++] = (char)(0x80 | (cp >> 6 & 0x3F)); b[n++] = (char)(0x80 | (cp & 0x3F));
    }
  }
  b[n] = 0;
  *out = b;
  return 0;
}

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
  if (peek(p, ']')) { p->s++; return 0; }
  for (;;) {
    if (*n == cap) {
      char m[64];
      snprintf(m, sizeof m, "%s has more than %u entries", what, cap);
      return jfail(p, m);
    }
    if (juint(p, &v[(*n)++])) return -1;
    if (peek(p, ',')) { p->s++; continue; }
    return expect(p, ']');
  }
}

static int parse_tensor(jp *p, st_tensor *t) {
  int have_dtype = 0, have_shape = 0, have_off = 0;
  if (expect(p, '{')) return -1;
  if (peek(p, '}')) return jfail(p, "empty tensor entry");
  for (;;) {
    char *key;
    if (jstring(p, &key)) return -1;
    if (expect(p, ':')) { free(key); return -1; }
    int rc = 0;
    if (!strcmp(key, "dtype") && !have_dtype) {
      char *d;
      have_dtype = 1;
      if (jstring(p, &d)) rc = -1;
      else if (strlen(d) >= sizeof t->dtype || !st_dtype_size(d)) {
        fail(p->err, p->errlen, "%s: tensor \"%s\" has the unknown dtype \"%s\"", p->path, t->name, d);
        rc = -1;
      } else {
        strcpy(t->dtype, d);
      }
      free(d);
    } else if (!strcmp(key, "shape") && !have_shape) {
      have_shape = 1;
      rc = juint_array(p, t->shape, ST_MAX_RANK, &t->rank, "shape");
    } else if (!strcmp(key, "data_offsets") && !have_off) {
      uint64_t o[2];
      uint32_t n;
      have_off = 1;
      rc = juint_array(p, o, 2, &n, "data_offsets");
      if (!rc && n != 2) rc = jfail(p, "data_offsets needs two entries");
      t->begin = o[0];
      t->end = o[1];
    } else {
      char m[ST_MAX_NAME + 64];
      snprintf(m, sizeof m, "unknown or repeated field \"%.200s\" in tensor \"%.40s\"", key, t->name);
      rc = jfail(p, m);
    }
    free(key);
    if (rc) return -1;
    if (peek(p, ',')) { p->s++; continue; }
    if (expect(p, '}')) return -1;
    break;
  }
  if (!have_dtype || !have_shape || !have_off)
    return fail(p->err, p->errlen, "%s: tensor \"%s\" lacks %s", p->path, t->name,
                !have_dtype ? "a dtype" : !have_shape ? "a shape" : "data_offsets");
  return 0;
}

static int parse_metadata(jp *p, st_file *f) {
  if (expect(p, '{')) return -1;
  if (peek(p, '}')) { p->s++; return 0; }
  for (;;) {
    char *k, *v;
    if (jstring(p, &k)) return -1;
    if (expect(p, ':') || (!peek(p, '"') && jfail(p, "__metadata__ values must be strings"))) {
      free(k);
      return -1;
    }
    if (jstring(p, &v)) { free(k); return -1; }
    for (uint32_t i = 0; i < f->meta_count; i++)
      if (!strcmp(f->meta_keys[i], k)) {
        free(v);
        fail(p->err, p->errlen, "%s: duplicate __metadata__ key \"%.200s\"", p->path, k);
        free(k);
        return -1;
      }
    char **nk = realloc(f->meta_keys, (f->meta_count + 1) * sizeof *nk);
    if (nk) f->meta_keys = nk;
    char **nv = realloc(f->meta_values, (f->meta_count + 1) * sizeof *nv);
    if (nv) f->meta_values = nv;
    if (!nk || !nv) { free(k); free(v); return jfail(p, "out of memory"); }
    f->meta_keys[f->meta_count] = k;
    f->meta_values[f->meta_count++] = v;
    if (peek(p, ',')) { p->s++; continue; }
    return expect(p, '}');
  }
}

static int parse_header(jp *p, st_file *f) {
  int have_meta = 0;
  uint32_t cap = 0;
  if (expect(p, '{')) return -1;
  if (!peek(p, '}')) {
    for (;;) {
      char *name;
      if (jstring(p, &name)) return -1;
      if (expect(p, ':')) { free(name); return -1; }
      if (!strcmp(name, "__metadata__")) {
        free(name);
        if (have_meta) return jfail(p, "__metadata__ appears twice");
        have_meta = 1;
        if (parse_metadata(p, f)) return -1;
      } else {
        if (strlen(name) >= ST_MAX_NAME || !name[0]) {
          free(name);
          return jfail(p, "tensor name empty or too long");
        }
        for (uint32_t i = 0; i < f->count; i++)
          if (!strcmp(f->tensors[i].name, name)) {
            fail(p->err, p->errlen, "%s: tensor \"%s\" appears twice in the header", p->path, name);
            free(name);
            return -1;
          }
        if (f->count == cap) {
          cap = cap ? cap * 2 : 8;
          st_tensor *nt = realloc(f->tensors, cap * sizeof *nt);
          if (!nt) { free(name); return jfail(p, "out of memory"); }
          f->tensors = nt;
        }
        st_tensor *t = &f->tensors[f->count++];
        memset(t, 0, sizeof *t);
        strcpy(t->name, name);
        free(name);
        if (parse_tensor(p, t)) return -1;
      }
      if (peek(p, ',')) { p->s++; continue; }
      break;
    }
  }
  if (expect(p, '}')) return -1;
  ws(p);
  if (p->s != p->end) return jfail(p, "bytes after the JSON object");
  return 0;
}

static int cmp_begin(const void *a, const void *b) {
  const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

static int validate(st_file *f, const char *path, char *err, size_t errlen) {
  uint64_t buf = f->size - f->data_start;
  for (uint32_t i = 0; i < f->count; i++) {
    const st_tensor *t = &f->tensors[i];
    uint64_t numel = 1, esize = st_dtype_size(t->dtype);
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
  const st_tensor **order = malloc((f->count ? f->count : 1) * sizeof *order);
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

int st_read(const char *path, st_file *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  FILE *fp = fopen(path, "rb");
  if (!fp) return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
  long len = -1;
  if (fseek(fp, 0, SEEK_END) == 0) len = ftell(fp);
  if (len < 0 || fseek(fp, 0, SEEK_SET) != 0) {
    fclose(fp);
    return fail(err, errlen, "%s: cannot determine its size", path);
  }
  out->size = (size_t)len;
  out->bytes = malloc(out->size ? out->size : 1);
  if (!out->bytes) {
    fclose(fp);
    return fail(err, errlen, "%s: out of memory for %zu bytes", path, out->size);
  }
  size_t got = fread(out->bytes, 1, out->size, fp);
  fclose(fp);
  if (got != out->size) {
    st_free(out);
    return fail(err, errlen, "%s: read error", path);
  }
  if (out->size < 8) {
    size_t n = out->size;
    st_free(out);
    return fail(err, errlen, "%s: truncated: %zu bytes, shorter than the 8-byte header length", path, n);
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | out->bytes[i];
  if (n > ST_MAX_HEADER) {
    st_free(out);
    return fail(err, errlen, "%s: header length %llu exceeds the format's limit of %u bytes (not a safetensors file?)",
                path, (unsigned long long)n, ST_MAX_HEADER);
  }
  if (n > out->size - 8) {
    size_t sz = out->size;
    st_free(out);
    return fail(err, errlen, "%s: truncated: the header claims %llu bytes but only %zu follow", path,
                (unsigned long long)n, sz - 8);
  }
  out->data_start = 8 + (size_t)n;
  const char *h = (const char *)out->bytes + 8;
  if (n == 0 || h[0] != '{') {
    st_free(out);
    return fail(err, errlen, "%s: the header is not a JSON object (it does not start with '{')", path);
  }
  jp p = {.start = h, .s = h, .end = h + n, .err = err, .errlen = errlen, .path = path};
  if (parse_header(&p, out) || validate(out, path, err, errlen)) {
    st_free(out);
    return -1;
  }
  return 0;
}

const st_tensor *st_find(const st_file *f, const char *name) {
  for (uint32_t i = 0; i < f->count; i++)
    if (!strcmp(f->tensors[i].name, name)) return &f->tensors[i];
  return NULL;
}

const void *st_data(const st_file *f, const st_tensor *t) { return f->bytes + f->data_start + t->begin; }

const char *st_metadata(const st_file *f, const char *key) {
  for (uint32_t i = 0; i < f->meta_count; i++)
    if (!strcmp(f->meta_keys[i], key)) return f->meta_values[i];
  return NULL;
}

void st_free(st_file *f) {
  for (uint32_t i = 0; i < f->meta_count; i++) {
    free(f->meta_keys[i]);
    free(f->meta_values[i]);
  }
  free(f->meta_keys);
  free(f->meta_values);
  free(f->tensors);
  free(f->bytes);
  memset(f, 0, sizeof *f);
}

/* ---- writer --------------------------------------------------------------------------------- */
typedef struct sb {
  char *b;
  size_t n, cap;
  int oom;
} sb;

static void sb_add(sb *s, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(s->b ? s->b + s->n : NULL, s->b ? s->cap - s->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) { s->oom = 1; return; }
    if (s->b && s->n + (size_t)k < s->cap) { s->n += (size_t)k; return; }
    size_t nc = (s->cap ? s->cap : 256) * 2 + (size_t)k;
    char *nb = realloc(s->b, nc);
    if (!nb) { s->oom = 1; return; }
    s->b = nb;
    s->cap = nc;
  }
}

static void sb_str(sb *s, const char *str) {
  sb_add(s, "\"");
  for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
    if (*c == '"' || *c == '\\') sb_add(s, "\\%c", *c);
    else if (*c < 0x20) sb_add(s, "\\u%04x", *c);
    else sb_add(s, "%c", *c);
  }
  sb_add(s, "\"");
}

int st_write(FILE *f, const st_entry *e, uint32_t n, const char *const *mk, const char *const *mv, uint32_t nmeta,
             char *err, size_t errlen) {
  sb h = {0};
  uint64_t off = 0;
  sb_add(&h, "{");
  if (nmeta) {
    sb_add(&h, "\"__metadata__\":{");
    for (uint32_t i = 0; i < nmeta; i++) {
      if (i) sb_add(&h, ",");
      sb_str(&h, mk[i]);
      sb_add(&h, ":");
      sb_str(&h, mv[i]);
    }
    sb_add(&h, "}");
  }
  for (uint32_t i = 0; i < n; i++) {
    size_t es = st_dtype_size(e[i].dtype);
    if (!es || e[i].rank > ST_MAX_RANK) {
      free(h.b);
      return fail(err, errlen, "safetensors: tensor \"%s\": unknown dtype %s or rank %u", e[i].name, e[i].dtype,
                  e[i].rank);
    }
    uint64_t bytes = es;
    for (uint32_t d = 0; d < e[i].rank; d++) bytes *= e[i].shape[d];
    if (nmeta || i) sb_add(&h, ",");
    sb_str(&h, e[i].name);
    sb_add(&h, ":{\"dtype\":\"%s\",\"shape\":[", e[i].dtype);
    for (uint32_t d = 0; d < e[i].rank; d++) sb_add(&h, "%s%llu", d ? "," : "", (unsigned long long)e[i].shape[d]);
    sb_add(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off, (unsigned long long)(off + bytes));
    off += bytes;
  }
  sb_add(&h, "}");
  while (!h.oom && (8 + h.n) % 8) sb_add(&h, " "); /* pad so the data starts 8-byte aligned */
  if (h.oom) {
    free(h.b);
    return fail(err, errlen, "safetensors: out of memory");
  }
  uint8_t len[8];
  for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)h.n >> (8 * i));
  int ok = fseek(f, 0, SEEK_SET) == 0 && fwrite(len, 1, 8, f) == 8 && fwrite(h.b, 1, h.n, f) == h.n;
  free(h.b);
  for (uint32_t i = 0; i < n && ok; i++) {
    size_t bytes = st_dtype_size(e[i].dtype);
    for (uint32_t d = 0; d < e[i].rank; d++) bytes *= e[i].shape[d];
    ok = fwrite(e[i].data, 1, bytes, f) == bytes;
  }
  if (ok) ok = fflush(f) == 0 && ftruncate(fileno(f), ftell(f)) == 0;
  if (!ok) return fail(err, errlen, "safetensors: write failed: %s", strerror(errno));
  return 0;
}
