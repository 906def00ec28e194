/* ocl_icd_test.c — the fake ICD through the system's ICD loader (OCL_ICD_VENDORS names its vendors
 * folder, PARITY_OPENCL_CHECK_SEED=7): one platform and one GPU device named after the executor and
 * its seed; buffers write, read, fill and copy (an overlapping copy refused; a non-blocking write
 * runs when the queue reaches it, and fails clFinish when its source changed before); a program is accepted
 * only with the prelude the host compile assumed (the reason in the build log), in either launch
 * layout (OCL_CONTIG 0 or 1); binaries, and the CPU layout's kernels in a GPU-layout program, are
 * refused with their error codes; arguments of the wrong size, a launch
 * with unset arguments and entries the ICD does not implement fail with an error, never a crash;
 * a kernel's reqd_work_group_size is its CL_KERNEL_COMPILE_WORK_GROUP_SIZE and, multiplied out, its
 * CL_KERNEL_WORK_GROUP_SIZE (256 without one), and a launch with another
 * local size, or none, is refused with CL_INVALID_WORK_GROUP_SIZE and a message naming the kernel and
 * both sizes, while one with that size runs. A plain program (exit status 0: every check passed),
 * CTest opencl_check_icd. `opencl_check_icd device-type cpu|gpu-fp32|bad` checks
 * PARITY_OPENCL_CHECK_DEVICE instead (the caller sets it): cpu gives one device of type CPU, named
 * so, and none of type GPU; gpu-fp32 one GPU without cl_khr_fp64 or correctly rounded division,
 * named so, which builds only the float-only programs the plugin writes for it; a bad value leaves
 * no platform (CTest opencl_check_icd_cpu_device, _fp32_device, _bad_device). */
#define _POSIX_C_SOURCE 200809L /* dup, fileno */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel_params.h" /* kp_mm_t, KP_MM_TILE */

static int failures;
#define CHECK(c)                                                                          \
  do {                                                                                    \
    if (!(c)) fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #c), failures++; \
  } while (0)

#define PRELUDE "#define OCL_CLASS 0\n#define HAS_FP64 1\n#define HAS_FMA 1\n#define OCL_LIB_DIV 0\n"

static cl_program program(cl_context c, cl_device_id d, const char *src, cl_int *built) {
  cl_int e;
  cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  CHECK(e == CL_SUCCESS && p);
  *built = clBuildProgram(p, 1, &d, "", NULL, NULL);
  return p;
}

static void buffers(cl_context c, cl_command_queue q) {
  cl_int e;
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 64, NULL, &e);
  CHECK(e == CL_SUCCESS && m);
  unsigned char in[64], out[64];
  for (int i = 0; i < 64; i++) in[i] = (unsigned char)i;
  CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, 64, in, 0, NULL, NULL) == CL_SUCCESS);
  const unsigned short pat = 0xabcd;
  CHECK(clEnqueueFillBuffer(q, m, &pat, 2, 8, 4, 0, NULL, NULL) == CL_SUCCESS);
  CHECK(clEnqueueCopyBuffer(q, m, m, 0, 32, 16, 0, NULL, NULL) == CL_SUCCESS);
  CHECK(clEnqueueCopyBuffer(q, m, m, 0, 8, 16, 0, NULL, NULL) == CL_MEM_COPY_OVERLAP);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 64, out, 0, NULL, NULL) == CL_SUCCESS);
  CHECK(out[7] == 7 && out[8] == 0xcd && out[9] == 0xab && out[12] == 12 && out[40] == 0xcd && out[63] == 63);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 60, 8, out, 0, NULL, NULL) == CL_INVALID_VALUE);
  /* a non-blocking write runs when the queue reaches it: from memory left alone, it lands; from
   * memory changed before clFinish, the change lands and clFinish fails (said on stderr) */
  unsigned char src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, 8, src, 0, NULL, NULL) == CL_SUCCESS);
  CHECK(clFinish(q) == CL_SUCCESS);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 8, out, 0, NULL, NULL) == CL_SUCCESS && out[0] == 1 && out[7] == 8);
  CHECK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, 8, src, 0, NULL, NULL) == CL_SUCCESS);
  CHECK(clFlush(q) == CL_SUCCESS); /* submitted, not yet run */
  src[3] = 99;
  CHECK(clFinish(q) == CL_OUT_OF_RESOURCES);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, 8, out, 0, NULL, NULL) == CL_SUCCESS && out[3] == 99);
  CHECK(clReleaseMemObject(m) == CL_SUCCESS);
}

static void programs(cl_context c, cl_device_id d, cl_command_queue q) {
  cl_int e, built;
  cl_program p = program(c, d, PRELUDE "#define OCL_CONTIG 0\n#define K_mm_fwd 1\n#define K_mm_blk 1\n", &built);
  CHECK(built == CL_SUCCESS);
  CHECK(clCreateKernel(p, "mm_blk", &e) == NULL && e == CL_INVALID_KERNEL_NAME);
  CHECK(clCreateKernel(p, "red_pass", &e) == NULL && e == CL_INVALID_KERNEL_NAME); /* not in the program */
  cl_kernel k = clCreateKernel(p, "mm_fwd", &e);
  CHECK(e == CL_SUCCESS && k);
  size_t wg = 0, g = 16, l = 16;
  CHECK(clGetKernelWorkGroupInfo(k, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS && wg == 256);
  CHECK(clSetKernelArg(k, 0, 4, &e) == CL_INVALID_ARG_SIZE);
  CHECK(clSetKernelArg(k, 9, sizeof(cl_mem), NULL) == CL_INVALID_ARG_INDEX);
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL) == CL_INVALID_KERNEL_ARGS);
  size_t bin = 1;
  CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bin, &bin, NULL) == CL_SUCCESS && bin == 0);
  CHECK(clReleaseKernel(k) == CL_SUCCESS && clReleaseProgram(p) == CL_SUCCESS);

  /* the CPU layout: its vector kernel is there */
  p = program(c, d, PRELUDE "#define OCL_CONTIG 1\n#define K_mm_fwd 1\n#define K_mm_blk 1\n", &built);
  CHECK(built == CL_SUCCESS);
  k = clCreateKernel(p, "mm_blk", &e);
  CHECK(e == CL_SUCCESS && k);
  CHECK(clReleaseKernel(k) == CL_SUCCESS && clReleaseProgram(p) == CL_SUCCESS);

  p = program(c, d, PRELUDE "#define OCL_CONTIG 2\n#define K_ew_unary 1\n", &built);
  char log[512] = "";
  CHECK(built == CL_BUILD_PROGRAM_FAILURE);
  CHECK(clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL) == CL_SUCCESS);
  CHECK(strstr(log, "OCL_CONTIG 2") != NULL);
  clReleaseProgram(p);
  p = program(c, d, "kernel void f(void) {}\n", &built);
  CHECK(built == CL_BUILD_PROGRAM_FAILURE);
  clReleaseProgram(p);

  const unsigned char *bins[1] = {(const unsigned char *)"x"};
  size_t len = 1;
  cl_int st = 0;
  CHECK(clCreateProgramWithBinary(c, 1, &d, &len, bins, &st, &e) == NULL && e == CL_INVALID_BINARY);
}

/* a launch with stderr caught: its code, and what the ICD said in msg */
static cl_int launch_said(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local,
                          char *msg, size_t n) {
  FILE *t = tmpfile();
  int saved = dup(2);
  CHECK(t && saved >= 0);
  fflush(stderr);
  dup2(fileno(t), 2);
  cl_int e = clEnqueueNDRangeKernel(q, k, dims, NULL, global, local, 0, NULL, NULL);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(t);
  msg[fread(msg, 1, n - 1, t)] = 0;
  fclose(t);
  return e;
}

static cl_mem buffer_of(cl_context c, cl_command_queue q, float v) {
  cl_int e;
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof v, NULL, &e);
  CHECK(e == CL_SUCCESS && clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL) == CL_SUCCESS);
  return m;
}

/* mm_fwd declares reqd_work_group_size(KP_MM_TILE, KP_MM_TILE, 1) (KERNEL_WG), red_pass none */
static void required_sizes(cl_context c, cl_device_id d, cl_command_queue q) {
  cl_int e, built;
  size_t wg[3] = {9, 9, 9};
  cl_program p = program(c, d, PRELUDE "#define OCL_CONTIG 0\n#define K_red_pass 1\n", &built);
  cl_kernel k = clCreateKernel(p, "red_pass", &e);
  CHECK(built == CL_SUCCESS && e == CL_SUCCESS);
  CHECK(clGetKernelWorkGroupInfo(k, d, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof wg, wg, NULL) == CL_SUCCESS);
  CHECK(wg[0] == 0 && wg[1] == 0 && wg[2] == 0);
  size_t most = 0;
  CHECK(clGetKernelWorkGroupInfo(k, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL) == CL_SUCCESS &&
        most == 256);
  CHECK(clReleaseKernel(k) == CL_SUCCESS && clReleaseProgram(p) == CL_SUCCESS);
  /* a declared 64 x 1 (smx_row_fwd): 64 is the largest, not the device's 256 */
  p = program(c, d, PRELUDE "#define OCL_CONTIG 0\n#define K_smx_row_fwd 1\n", &built);
  k = clCreateKernel(p, "smx_row_fwd", &e);
  CHECK(built == CL_SUCCESS && e == CL_SUCCESS);
  CHECK(clGetKernelWorkGroupInfo(k, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL) == CL_SUCCESS &&
        most == KP_SMX_WG);
  CHECK(clReleaseKernel(k) == CL_SUCCESS && clReleaseProgram(p) == CL_SUCCESS);

  p = program(c, d, PRELUDE "#define OCL_CONTIG 0\n#define K_mm_fwd 1\n", &built);
  k = clCreateKernel(p, "mm_fwd", &e);
  CHECK(built == CL_SUCCESS && e == CL_SUCCESS);
  CHECK(clGetKernelWorkGroupInfo(k, d, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof wg, wg, NULL) == CL_SUCCESS);
  CHECK(wg[0] == KP_MM_TILE && wg[1] == KP_MM_TILE && wg[2] == 1);
  /* the largest size it runs with is the declared one */
  CHECK(clGetKernelWorkGroupInfo(k, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL) == CL_SUCCESS &&
        most == KP_MM_TILE * KP_MM_TILE);
  /* c = a b, 1 x 1 x 1, f32 */
  kp_mm_t mm = {.M = 1, .N = 1, .K = 1, .batch = 1, .am = 1, .ak = 1, .bk = 1, .bn = 1, .cm = 1, .cn = 1, .dt = 1};
  cl_mem m[3] = {buffer_of(c, q, 3.0f), buffer_of(c, q, 5.0f), buffer_of(c, q, 0.0f)};
  CHECK(clSetKernelArg(k, 0, sizeof mm, &mm) == CL_SUCCESS);
  for (cl_uint i = 0; i < 3; i++) CHECK(clSetKernelArg(k, i + 1, sizeof m[i], &m[i]) == CL_SUCCESS);
  /* 2 x 1 groups of half the size: a launch the executor could run but for the declared size */
  size_t global[2] = {KP_MM_TILE, KP_MM_TILE}, half[2] = {KP_MM_TILE / 2, KP_MM_TILE / 2};
  size_t global_half[2] = {KP_MM_TILE, KP_MM_TILE / 2}, flat = KP_MM_TILE * KP_MM_TILE;
  char msg[512], want[160];
  CHECK(launch_said(q, k, 2, global_half, half, msg, sizeof msg) == CL_INVALID_WORK_GROUP_SIZE);
  snprintf(want, sizeof want,
           "opencl-check: clEnqueueNDRangeKernel: mm_fwd: local size %d x %d x 1, but the kernel declares "
           "reqd_work_group_size(%d, %d, 1)",
           KP_MM_TILE / 2, KP_MM_TILE / 2, KP_MM_TILE, KP_MM_TILE);
  CHECK(strstr(msg, want) != NULL);
  CHECK(launch_said(q, k, 2, global, NULL, msg, sizeof msg) == CL_INVALID_WORK_GROUP_SIZE);
  CHECK(strstr(msg,
               "mm_fwd: local size NULL (the implementation's choice), but the kernel declares "
               "reqd_work_group_size(16, 16, 1)") != NULL);
  CHECK(launch_said(q, k, 1, &flat, &flat, msg, sizeof msg) == CL_INVALID_WORK_GROUP_SIZE);
  CHECK(strstr(msg, "mm_fwd: local size 256 x 1 x 1") != NULL);
  float out = 0;
  CHECK(launch_said(q, k, 2, global, global, msg, sizeof msg) == CL_SUCCESS && !msg[0]); /* one group */
  CHECK(clEnqueueReadBuffer(q, m[2], CL_TRUE, 0, sizeof out, &out, 0, NULL, NULL) == CL_SUCCESS && out == 15.0f);
  for (int i = 0; i < 3; i++) clReleaseMemObject(m[i]);
  CHECK(clReleaseKernel(k) == CL_SUCCESS && clReleaseProgram(p) == CL_SUCCESS);
}

/* gpu-fp32: a GPU without cl_khr_fp64 and without correctly rounded division; its programs are
 * the float-only ones (HAS_FP64 0), with pmathf's division in the families that divide */
static void fp32_device(cl_device_id d) {
  char ext[256] = "x", log[512] = "";
  cl_device_fp_config single = 0, dbl = 1;
  CHECK(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL) == CL_SUCCESS && !strstr(ext, "cl_khr_fp64"));
  CHECK(clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof dbl, &dbl, NULL) == CL_SUCCESS && dbl == 0);
  CHECK(clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof single, &single, NULL) == CL_SUCCESS &&
        (single & CL_FP_FMA) && !(single & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT));
  cl_int e, built;
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  CHECK(e == CL_SUCCESS && c);
#define FP32_PRELUDE(cls, fma, div) \
  "#define OCL_CLASS " #cls "\n#define HAS_FP64 0\n#define HAS_FMA " #fma "\n#define OCL_LIB_DIV " #div "\n"
  static const struct {
    const char *src, *why; /* why: in the build log when it is refused (NULL: it builds) */
  } progs[] = {
      {FP32_PRELUDE(0, 1, 1) "#define OCL_CONTIG 0\n#define K_smx_row_fwd 1\n", NULL},
      {FP32_PRELUDE(0, 1, 0) "#define OCL_CONTIG 0\n#define K_mm_fwd 1\n", NULL}, /* matmul divides nothing */
      {FP32_PRELUDE(2, 0, 0) "#define OCL_CONTIG 0\n#define K_ew_binary 1\n", NULL},
      {PRELUDE "#define OCL_CONTIG 0\n#define K_ew_binary 1\n", "HAS_FP64 1: this device lacks cl_khr_fp64"},
      {FP32_PRELUDE(0, 1, 0) "#define OCL_CONTIG 0\n#define K_ew_binary 1\n", "OCL_LIB_DIV 0 in class 0"},
      {FP32_PRELUDE(0, 1, 1) "#define OCL_CONTIG 0\n#define K_mm_fwd 1\n", "OCL_LIB_DIV 1 in class 0"},
      {FP32_PRELUDE(1, 0, 0) "#define OCL_CONTIG 0\n#define K_ew_binary 1\n", "OCL_CLASS 1 (float64)"},
      {FP32_PRELUDE(0, 1, 1) "#define OCL_CONTIG 1\n#define K_ew_binary 1\n", "OCL_CONTIG 1 without float64"},
  };
#undef FP32_PRELUDE
  for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
    cl_program p = program(c, d, progs[i].src, &built);
    log[0] = 0;
    CHECK(clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL) == CL_SUCCESS);
    if (progs[i].why ? built != CL_BUILD_PROGRAM_FAILURE || !strstr(log, progs[i].why) : built != CL_SUCCESS)
      fprintf(stderr, "program %zu: build %d, log '%s'\n", i, built, log), failures++;
    clReleaseProgram(p);
  }
  /* the float class's own objects: smx_row_fwd's table has it */
  cl_program p = program(c, d, progs[0].src, &built);
  cl_kernel k = clCreateKernel(p, "smx_row_fwd", &e);
  CHECK(built == CL_SUCCESS && e == CL_SUCCESS && k);
  CHECK(clReleaseKernel(k) == CL_SUCCESS && clReleaseProgram(p) == CL_SUCCESS && clReleaseContext(c) == CL_SUCCESS);
}

/* PARITY_OPENCL_CHECK_DEVICE: `want` cpu (a CPU device, no GPU), gpu-fp32 (a GPU without float64)
 * or bad (no platform) */
static int device_type(const char *want) {
  cl_platform_id plat;
  cl_device_id d;
  cl_uint n = 0;
  char name[256] = "";
  cl_device_type type = 0;
  cl_int e = clGetPlatformIDs(1, &plat, &n);
  int cpu = !strcmp(want, "cpu");
  cl_device_type other = cpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU,
                 mine = cpu ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
  if (!strcmp(want, "bad")) {
    CHECK(e != CL_SUCCESS || n == 0);
  } else {
    CHECK(e == CL_SUCCESS && n == 1);
    CHECK(clGetDeviceIDs(plat, other, 1, &d, &n) == CL_DEVICE_NOT_FOUND);
    CHECK(clGetDeviceIDs(plat, mine, 1, &d, &n) == CL_SUCCESS && n == 1);
    CHECK(clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL) == CL_SUCCESS && type == mine);
    CHECK(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL) == CL_SUCCESS);
    CHECK(strstr(name, cpu ? "opencl-check: checking executor, seed 7, switch 1/2, CPU device"
                           : "opencl-check: checking executor, seed 7, switch 1/2, GPU without float64") != NULL);
    if (!cpu) fp32_device(d);
  }
  printf("ocl_icd_test device-type %s: %s\n", want, failures ? "FAILED" : "passed");
  return failures != 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "device-type")) return device_type(argv[2]);
  cl_platform_id plat;
  cl_device_id d;
  cl_uint n = 0;
  char name[256] = "";
  cl_device_type type = 0;
  if (clGetPlatformIDs(1, &plat, &n) != CL_SUCCESS || n != 1) {
    fprintf(stderr, "ocl_icd_test: no platform: is OCL_ICD_VENDORS the checker's vendors folder?\n");
    return 1;
  }
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &d, &n) == CL_SUCCESS && n == 1);
  CHECK(clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL) == CL_SUCCESS && type == CL_DEVICE_TYPE_GPU);
  CHECK(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL) == CL_SUCCESS);
  CHECK(strstr(name, "opencl-check: checking executor, seed 7, switch 1/2") != NULL);
  CHECK(clGetDeviceInfo(d, CL_DEVICE_IMAGE_SUPPORT, sizeof n, &n, NULL) == CL_INVALID_VALUE);
  cl_int e;
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  CHECK(e == CL_SUCCESS && c);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  CHECK(e == CL_SUCCESS && q);
  buffers(c, q);
  programs(c, d, q);
  required_sizes(c, d, q);
  cl_event ev;
  CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev) == CL_INVALID_OPERATION); /* not implemented */
  CHECK(clEnqueueMapBuffer(q, NULL, CL_TRUE, 0, 0, 4, 0, NULL, NULL, &e) == NULL);
  CHECK(clFinish(q) == CL_SUCCESS && clReleaseCommandQueue(q) == CL_SUCCESS && clReleaseContext(c) == CL_SUCCESS);
  printf("ocl_icd_test: %s\n", failures ? "FAILED" : "passed");
  return failures != 0;
}
