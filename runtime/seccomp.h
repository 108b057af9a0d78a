/* linux.seccomp through libseccomp. Compile early (in the runtime, where
 * errors can still be reported to the caller), load as the very last step
 * before execve. */
#ifndef AR_SECCOMP_H
#define AR_SECCOMP_H

#include <stddef.h>
#include "error.h"
#include "model.h"

struct ar_seccomp_prog;          /* a compiled BPF program plus its flags */

/* Build the filter (using the compiled-filter cache when possible). */
int ar_seccomp_compile (const struct ar_seccomp *sc, struct ar_seccomp_prog **out, ar_error **err);
/* Load it into the calling thread. With SCMP_ACT_NOTIFY rules, *listener_fd gets
 * the notify fd (else -1). */
int ar_seccomp_load (struct ar_seccomp_prog *prog, int *listener_fd, ar_error **err);
/* Send the notify fd and the container state JSON to listenerPath (SCM_RIGHTS),
 * as the runtime-spec describes. */
int ar_seccomp_send_listener (const struct ar_seccomp *sc, int listener_fd, const char *state_json, ar_error **err);
void ar_seccomp_prog_free (struct ar_seccomp_prog *prog);

#endif
