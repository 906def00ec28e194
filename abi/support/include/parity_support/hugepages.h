/* hugepages.h — asking Linux for transparent huge pages on a large host block. */
#ifndef PARITY_SUPPORT_HUGEPAGES_H
#define PARITY_SUPPORT_HUGEPAGES_H

#include <stddef.h>

/* Advise the 2 MiB-aligned interior of [p, p + bytes) as MADV_HUGEPAGE when bytes >= 4 MiB (Linux
 * with THP in "madvise" or "always" mode; elsewhere, or on failure, nothing happens). Pages not
 * yet touched then fault in 2 MiB at a time: a first write of 64 MiB takes 32 faults instead of
 * 16,384 (each fault costs several microseconds on a virtual machine). The contents are unchanged. */
void psup_advise_hugepages(void *p, size_t bytes);

#endif
