/* The escape probes of `agentrun check`, run inside the sandbox as the
 * hidden command `agentrun __probe` (the agentrun binary is bound read-only
 * into the sandbox). Each probe prints one line on stdout:
 *   NAME <TAB> EXPECTED <TAB> GOT <TAB> VERDICT
 * with VERDICT "ok", "crossed", or "host" when only the host can tell (a
 * file written inside: did it land on the host?). */
#ifndef AR_PROBES_H
#define AR_PROBES_H

#include "cli.h"
#include "context.h"

#define AR_PROBE_BIN "/run/agentrun/agentrun"   /* where check binds agentrun */
#define AR_PROBE_CMD "__probe"

/* Prefix of the files the write probes create ("<prefix><token>"). */
#define AR_PROBE_FILE_PREFIX ".agentrun-probe-"

int cmd_probe (struct ar_ctx *ctx, int argc, char **argv);

#endif
