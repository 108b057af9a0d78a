/* Helpers shared by the lifecycle commands (cmd_*.c). */
#ifndef AR_CMD_COMMON_H
#define AR_CMD_COMMON_H

#include "cli.h"
#include "container.h"

/* create's flags (and run's -d/--keep when run is true), then the id. */
int ar_parse_create_opts (int argc, char **argv, bool run, struct ar_create_opts *o, ar_error **err);
/* Exactly one positional argument (the id) after the options. */
int ar_one_id (struct ar_optparser *p, const char **id, ar_error **err);
/* Log the error and return 1. */
int ar_cmd_fail (ar_error *err);

#endif
