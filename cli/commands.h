/* One entry point per command; each lives in runtime/cmd_<name>.c.
 * argv[0] is the command name, argv[1..] its own flags and arguments. */
#ifndef AR_COMMANDS_H
#define AR_COMMANDS_H

#include "cli.h"
#include "context.h"

typedef int (*ar_cmd_fn) (struct ar_ctx *ctx, int argc, char **argv);

int cmd_version (struct ar_ctx *ctx, int argc, char **argv);
/* lifecycle: the runtime-spec operations, in runc's words */
int cmd_create (struct ar_ctx *ctx, int argc, char **argv);
int cmd_start (struct ar_ctx *ctx, int argc, char **argv);
int cmd_run (struct ar_ctx *ctx, int argc, char **argv);
int cmd_state (struct ar_ctx *ctx, int argc, char **argv);
int cmd_kill (struct ar_ctx *ctx, int argc, char **argv);
int cmd_delete (struct ar_ctx *ctx, int argc, char **argv);
int cmd_list (struct ar_ctx *ctx, int argc, char **argv);
int cmd_ps (struct ar_ctx *ctx, int argc, char **argv);
int cmd_exec (struct ar_ctx *ctx, int argc, char **argv);
int cmd_update (struct ar_ctx *ctx, int argc, char **argv);
int cmd_pause (struct ar_ctx *ctx, int argc, char **argv);
int cmd_resume (struct ar_ctx *ctx, int argc, char **argv);
int cmd_events (struct ar_ctx *ctx, int argc, char **argv);
int cmd_spec (struct ar_ctx *ctx, int argc, char **argv);
int cmd_validate (struct ar_ctx *ctx, int argc, char **argv);
int cmd_features (struct ar_ctx *ctx, int argc, char **argv);
int cmd_sandbox (struct ar_ctx *ctx, int argc, char **argv);
int cmd_trust (struct ar_ctx *ctx, int argc, char **argv);
int cmd_spec_agent (struct ar_ctx *ctx, int argc, char **argv); /* spec --agent */
int cmd_check (struct ar_ctx *ctx, int argc, char **argv);
int cmd_probe (struct ar_ctx *ctx, int argc, char **argv); /* hidden: __probe, inside check's sandbox */

#endif
