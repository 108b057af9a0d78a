/* See optlist.h. */
#include "config.h"
#include "optlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
np_list_options_if_asked (int argc, char **argv, const struct option *opts)
{
  if (argc != 2 || strcmp (argv[1], "--list-options") != 0)
    return;
  for (; opts->name; opts++)
    printf ("%s\t-\t%s\n", opts->name,
            opts->has_arg == required_argument   ? "arg"
            : opts->has_arg == optional_argument ? "optional"
                                                 : "flag");
  exit (fflush (stdout) == 0 ? 0 : 1);
}
