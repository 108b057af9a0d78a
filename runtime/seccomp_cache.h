/* The compiled-filter cache: <state_root>/.seccomp-cache/<sha256>.bpf, keyed by
 * the profile's canonical serialisation, the libseccomp version, the native
 * architecture and the kernel's seccomp API level. Internal to runtime/seccomp*.c. */
#ifndef AR_SECCOMP_CACHE_H
#define AR_SECCOMP_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"
#include "seccomp.h"
#include "sha256.h"

/* The cache key of a profile as compiled here. */
void ar_seccomp_cache_key (const struct ar_seccomp *sc, unsigned char key[AR_SHA256_LEN]);
/* The cache key of a filter built by code (ar_seccomp_build_cached). */
void ar_seccomp_cache_key_named (const char *name, unsigned char key[AR_SHA256_LEN]);
/* 0 and *out on a valid entry; -1 on a miss or a bad entry (which is ignored). */
int ar_seccomp_cache_load (const char *state_root, const unsigned char key[AR_SHA256_LEN], struct ar_seccomp_prog **out);
/* Best effort, atomic (temp file + rename), mode 0600; failures are debug lines. */
void ar_seccomp_cache_store (const char *state_root, const unsigned char key[AR_SHA256_LEN],
                             const struct ar_seccomp_prog *prog);

#endif
