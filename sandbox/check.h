/* `agentrun check`: the escape probes (probes.h) run inside a sandbox made
 * with the given options, their answers judged on the host (a file written
 * inside is looked for outside), one line per probe or a JSON report. */
#ifndef AR_CHECK_H
#define AR_CHECK_H

#include <stdbool.h>
#include "cli.h"
#include "context.h"
#include "error.h"
#include "sandbox.h"

/* sb: options parsed, command not set. Prints the report on stdout. Returns
 * 0 with *crossed = number of probes that crossed (controls that failed
 * count), -1 when the sandbox itself could not run. */
int ar_check_run (struct ar_ctx *ctx, struct ar_sandbox *sb, bool json, int *crossed, ar_error **err);

#endif
