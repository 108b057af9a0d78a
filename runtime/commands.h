/* One entry point per command; each lives in runtime/cmd_<name>.c.
 * argv[0] is the command name, argv[1..] its own flags and arguments. */
#ifndef AR_COMMANDS_H
#define AR_COMMANDS_H

#include "cli.h"

int cmd_version (struct ar_globals *g, int argc, char **argv);

#endif
