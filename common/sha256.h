/* SHA-256 (FIPS 180-4), for the compiled-filter cache's keys and entry
 * checks. On x86-64 CPUs with the SHA extensions the block function uses
 * them (glibc's already-probed CPU features say so: no cpuid of our own,
 * which traps to the hypervisor on a VM); else portable C. */
#ifndef AR_SHA256_H
#define AR_SHA256_H

#include <stddef.h>

#define AR_SHA256_LEN 32

void ar_sha256 (const void *data, size_t len, unsigned char out[AR_SHA256_LEN]);

#endif
