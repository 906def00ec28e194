/* cl_ref.h — the raw OpenCL reference of the prepared section's per-op figure on an OpenCL device:
 * a 2-element add kernel enqueued straight through the OpenCL API (four clSetKernelArg and one
 * clEnqueueNDRangeKernel per launch, one work-item, no event), on the device of the same name,
 * loaded with dlopen (libOpenCL.so.1, the ICD loader the OpenCL plugin uses). What parity adds to
 * a launch is the difference between the two; what the driver costs is this figure. */
#ifndef PARITY_BENCH_CL_REF_H
#define PARITY_BENCH_CL_REF_H

#include <stddef.h>

typedef struct cl_ref cl_ref;
/* Ready to launch on the OpenCL device named `device_name`; NULL with why filled when OpenCL or
 * that device is unavailable (reported, never an error). */
cl_ref *cl_ref_create(const char *device_name, char *why, size_t whylen);
/* `launches` adds back to back, then clFinish: 0 when every call succeeded. */
int cl_ref_run(cl_ref *r, int launches);
void cl_ref_destroy(cl_ref *r);

#endif
