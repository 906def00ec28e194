/* fake_graph.h — CUDA graphs in the fake driver (included by fake_libcuda.c after its entry
 * points): stream capture, instantiation and launch, honest enough to test the plugin's plans.
 *   - cuStreamBeginCapture puts a stream in capture mode: kernel launches and memsets on it are
 *     recorded as nodes (a launch's arguments copied by the sizes the emulated kernel table gives,
 *     as the driver copies them by the kernel's signature), not run. Any other work on a capturing
 *     stream (a copy, a synchronize, an event, a stream-ordered allocation or free) invalidates the
 *     capture and fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; so do cuMemAlloc and cuMemFree
 *     while a capture not in RELAXED mode is under way (unsafe calls in CUDA's terms), and a call
 *     that fails on a capturing stream invalidates its capture, as in CUDA. cuStreamEndCapture ends
 *     the capture in every case: the graph, or CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and none.
 *   - cuGraphInstantiateWithFlags copies the graph (the copy does not depend on it); cuGraphLaunch
 *     runs the nodes in order, each as the eager call would (the emulated kernels and the checking
 *     executor run the recorded kernels with the recorded arguments; the plain fake counts them).
 *   - modes (FAKE_CUDA_MODE / fake_cuda_set_mode): "nographs" hides every graph entry point from
 *     cuGetProcAddress, "hide:<entry>" one of them; "fail:<entry>" makes that entry point (a graph
 *     one, cuLaunchKernel or a memset) fail with CUDA_ERROR_OUT_OF_MEMORY.
 * fake_cuda_graphs() counts live graphs and executable graphs, fake_cuda_capturing() captures
 * under way, fake_cuda_graph_launches() graph launches that ran. */

#define FAKE_MAX_ARGS 32
#define FAKE_MAX_CAPTURES 8

typedef struct fake_node_t {
  int kernel; /* 1: a launch, 0: a memset */
  const void *emu;
  char name[64];
  unsigned grid[3], block[3];
  int nargs;
  size_t off[FAKE_MAX_ARGS], size; /* the arguments' bytes in blob */
  unsigned char *blob;
  CUdeviceptr dst; /* memset: rows of `width` elements of `esize` bytes, `pitch` apart */
  size_t pitch, width, height;
  unsigned value, esize;
} fake_node_t;

typedef struct fake_graph_t {
  fake_node_t *n;
  size_t count, cap;
  int exec; /* an executable graph */
} fake_graph_t;

static struct {
  CUstream stream;
  fake_graph_t *graph;
  CUstreamCaptureMode mode;
  int invalid;
} captures[FAKE_MAX_CAPTURES];
static int graphs_live, graph_launches;

EXPORT int fake_cuda_graphs(void) { return graphs_live; }
EXPORT int fake_cuda_graph_launches(void) { return graph_launches; }
EXPORT int fake_cuda_capturing(void) {
  int n = 0;
  for (int i = 0; i < FAKE_MAX_CAPTURES; i++) n += captures[i].graph != NULL;
  return n;
}

static int capture_of(CUstream s) {
  for (int i = 0; i < FAKE_MAX_CAPTURES; i++)
    if (captures[i].graph && captures[i].stream == s) return i;
  return -1;
}

static int failing(const char *entry) {
  (void)is(""); /* reads FAKE_CUDA_MODE on first use */
  return strncmp(mode, "fail:", 5) == 0 && strcmp(mode + 5, entry) == 0;
}

static void graph_free(fake_graph_t *g) {
  if (!g) return;
  for (size_t i = 0; i < g->count; i++) free(g->n[i].blob);
  free(g->n);
  free(g);
  graphs_live--;
}

static fake_graph_t *graph_new(int exec) {
  fake_graph_t *g = calloc(1, sizeof *g);
  if (g) graphs_live++, g->exec = exec;
  return g;
}

/* A failed call on stream s: its capture (if any) is invalidated, as CUDA does. */
static CUresult stream_failed(CUstream s, CUresult r) {
  int c = capture_of(s);
  if (c >= 0) captures[c].invalid = 1;
  return r;
}

/* Work that cannot be captured: fine on a stream that is not capturing. */
static CUresult stream_op(CUstream s, const char *entry) {
  if (stream_check(s, entry) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
  if (failing(entry)) return stream_failed(s, CUDA_ERROR_OUT_OF_MEMORY);
  return capture_of(s) >= 0 ? stream_failed(s, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) : CUDA_SUCCESS;
}

/* cuMemAlloc, cuMemFree: unsafe during a capture that is not RELAXED (it is invalidated). */
static CUresult unsafe_op(void) {
  CUresult r = CUDA_SUCCESS;
  for (int i = 0; i < FAKE_MAX_CAPTURES; i++)
    if (captures[i].graph && captures[i].mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
      captures[i].invalid = 1;
      r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
  return r;
}

static fake_node_t *node_add(fake_graph_t *g) {
  if (g->count == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 16;
    fake_node_t *n = realloc(g->n, cap * sizeof *n);
    if (!n) return NULL;
    g->n = n;
    g->cap = cap;
  }
  fake_node_t *n = &g->n[g->count++];
  memset(n, 0, sizeof *n);
  return n;
}

static CUresult capture_memset(CUstream s, CUdeviceptr d, size_t pitch, unsigned v, unsigned esize, size_t w,
                               size_t h) {
  int c = capture_of(s);
  if (captures[c].invalid) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  fake_node_t *n = node_add(captures[c].graph);
  if (!n) return stream_failed(s, CUDA_ERROR_OUT_OF_MEMORY);
  n->dst = d, n->pitch = pitch, n->value = v, n->esize = esize, n->width = w, n->height = h;
  return CUDA_SUCCESS;
}

/* a launch on a capturing stream: a node with a copy of its arguments */
static CUresult capture_kernel(CUstream s, const fake_fn_t *fn, const unsigned *g, const unsigned *b, void **params) {
  int c = capture_of(s);
  if (captures[c].invalid) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  size_t size = 0, off[FAKE_MAX_ARGS];
  int nargs = 0;
#ifdef FAKE_CUDA_EMULATE
  const emu_kernel_t *k = fn->emu;
  if (!k->psizes || k->nargs > FAKE_MAX_ARGS) return stream_failed(s, CUDA_ERROR_NOT_SUPPORTED);
  nargs = k->nargs;
  for (int i = 0; i < nargs; i++) {
    off[i] = size;
    size += (k->psizes[i] + 15u) & ~(size_t)15u;
  }
#endif
  unsigned char *blob = malloc(size ? size : 1);
  fake_node_t *n = blob ? node_add(captures[c].graph) : NULL;
  if (!n) {
    free(blob);
    return stream_failed(s, CUDA_ERROR_OUT_OF_MEMORY);
  }
#ifdef FAKE_CUDA_EMULATE
  for (int i = 0; i < nargs; i++) memcpy(blob + off[i], params[i], k->psizes[i]);
#else
  (void)params;
#endif
  n->kernel = 1, n->emu = fn->emu, n->nargs = nargs, n->size = size, n->blob = blob;
  snprintf(n->name, sizeof n->name, "%s", fn->name);
  memcpy(n->off, off, sizeof off);
  memcpy(n->grid, g, sizeof n->grid);
  memcpy(n->block, b, sizeof n->block);
  return CUDA_SUCCESS;
}

static CUresult f_cuStreamBeginCapture(CUstream s, CUstreamCaptureMode m) {
  GUARD;
  if (stream_check(s, "cuStreamBeginCapture") != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
  if (failing("cuStreamBeginCapture")) return CUDA_ERROR_OUT_OF_MEMORY;
  if (capture_of(s) >= 0) return CUDA_ERROR_ILLEGAL_STATE;
  for (int i = 0; i < FAKE_MAX_CAPTURES; i++)
    if (!captures[i].graph) {
      if (!(captures[i].graph = graph_new(0))) return CUDA_ERROR_OUT_OF_MEMORY;
      captures[i].stream = s, captures[i].mode = m, captures[i].invalid = 0;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult f_cuStreamEndCapture(CUstream s, CUgraph *out) {
  GUARD;
  int c = capture_of(s);
  if (c < 0) return CUDA_ERROR_ILLEGAL_STATE;
  fake_graph_t *g = captures[c].graph; /* the capture ends whatever happens below */
  int invalid = captures[c].invalid;
  captures[c].graph = NULL;
  if (failing("cuStreamEndCapture") || invalid) {
    graph_free(g);
    *out = NULL;
    return invalid ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_ERROR_OUT_OF_MEMORY;
  }
  *out = (CUgraph)g;
  return CUDA_SUCCESS;
}

static CUresult f_cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph graph, unsigned long long flags) {
  GUARD;
  const fake_graph_t *g = (const fake_graph_t *)graph;
  if (!g || g->exec || flags) return CUDA_ERROR_INVALID_VALUE;
  if (failing("cuGraphInstantiateWithFlags")) return CUDA_ERROR_OUT_OF_MEMORY;
  fake_graph_t *e = graph_new(1);
  if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < g->count; i++) {
    fake_node_t *n = node_add(e);
    unsigned char *blob = n ? malloc(g->n[i].size ? g->n[i].size : 1) : NULL;
    if (!blob) {
      if (n) e->count--;
      graph_free(e);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *n = g->n[i];
    if (g->n[i].size) memcpy(blob, g->n[i].blob, g->n[i].size); /* a memset node has no blob */
    n->blob = blob;
  }
  *out = (CUgraphExec)e;
  return CUDA_SUCCESS;
}

/* one node of a graph launched on stream s (live: cuGraphLaunch checked it, and s is not capturing) */
static CUresult run_node(const fake_node_t *n, CUstream s) {
  if (!n->kernel) {
    if (n->height == 1 && n->esize == 1) return f_cuMemsetD8Async(n->dst, (unsigned char)n->value, n->width, s);
    if (n->height == 1 && n->esize == 2) return f_cuMemsetD16Async(n->dst, (unsigned short)n->value, n->width, s);
    if (n->height == 1) return f_cuMemsetD32Async(n->dst, n->value, n->width, s);
    return f_cuMemsetD2D32Async(n->dst, n->pitch, n->value, n->width, n->height, s);
  }
  void *params[FAKE_MAX_ARGS];
  for (int i = 0; i < n->nargs; i++) params[i] = n->blob + n->off[i];
  return run_kernel(n->emu, n->name, n->grid, n->block, params);
}

static CUresult f_cuGraphLaunch(CUgraphExec exec, CUstream s) {
  GUARD;
  const fake_graph_t *e = (const fake_graph_t *)exec;
  if (!e || !e->exec) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = stream_op(s, "cuGraphLaunch"); /* a graph launched into a capture: not modelled */
  if (r == CUDA_SUCCESS) graph_launches++;
  for (size_t i = 0; r == CUDA_SUCCESS && i < e->count; i++) r = run_node(&e->n[i], s);
  return r;
}

static CUresult f_cuGraphExecDestroy(CUgraphExec exec) {
  FAKE_LOCKED;
  fake_graph_t *e = (fake_graph_t *)exec;
  if (!e || !e->exec) return CUDA_ERROR_INVALID_VALUE;
  if (failing("cuGraphExecDestroy")) return CUDA_ERROR_OUT_OF_MEMORY;
  graph_free(e);
  return CUDA_SUCCESS;
}

static CUresult f_cuGraphDestroy(CUgraph graph) {
  FAKE_LOCKED;
  fake_graph_t *g = (fake_graph_t *)graph;
  if (!g || g->exec) return CUDA_ERROR_INVALID_VALUE;
  if (failing("cuGraphDestroy")) return CUDA_ERROR_OUT_OF_MEMORY;
  graph_free(g);
  return CUDA_SUCCESS;
}

// clang-format off
#define FAKE_GRAPH_ENTRIES(F_)                                                                    \
  F_(cuStreamBeginCapture) F_(cuStreamEndCapture) F_(cuGraphInstantiateWithFlags) F_(cuGraphLaunch) \
  F_(cuGraphExecDestroy) F_(cuGraphDestroy)
// clang-format on

static int hidden(const char *symbol) {
  static const char *const graph_entries[] = {"cuStreamBeginCapture",        "cuStreamEndCapture",
                                              "cuGraphInstantiateWithFlags", "cuGraphLaunch",
                                              "cuGraphExecDestroy",          "cuGraphDestroy"};
  is("ok"); /* reads FAKE_CUDA_MODE on first use */
  if (strncmp(mode, "hide:", 5) == 0) return strcmp(mode + 5, symbol) == 0;
  if (strcmp(mode, "nographs") != 0) return 0;
  for (size_t i = 0; i < sizeof graph_entries / sizeof graph_entries[0]; i++)
    if (strcmp(graph_entries[i], symbol) == 0) return 1;
  return 0;
}
