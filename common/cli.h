/* Command-line parsing shared by every command, runc style: long options
 * with one or two dashes, "--opt value" or "--opt=value", short options, and
 * parsing stops at the first positional argument or "--". */
#ifndef AR_CLI_H
#define AR_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include "error.h"

struct ar_opt {
  const char *name; /* long name without dashes */
  char short_name; /* 0 if none */
  bool has_arg;
  int id; /* > 0 */
};

struct ar_optparser {
  int argc;
  char **argv;
  int i; /* next argument to look at; positionals start here when done */
  const struct ar_opt *opts; /* terminated by an entry with name == NULL */
};

/* Returns the id of the next option (with *arg set when it takes one),
 * 0 when options are over (positionals start at p->i), -1 on error. */
int ar_opt_next (struct ar_optparser *p, const char **arg, ar_error **err);

/* Set by the hidden `agentrun --list-options CMD`: the next ar_opt_next
 * prints the table it was given and exits, so that the man page test and
 * shell completion read the very tables the commands parse with. */
extern bool ar_opt_list_only;
/* One option a line: NAME TAB SHORT ('-' if none) TAB arg|flag. */
void ar_opt_print (FILE *f, const struct ar_opt *opts);

/* Parse a non-negative decimal integer option value; -1 with err on junk. */
int ar_opt_uint (const char *opt, const char *arg, unsigned long long max, unsigned long long *out, ar_error **err);

#endif
