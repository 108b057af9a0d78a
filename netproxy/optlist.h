/* The hidden `--list-options` of agentrun-relay and agentrun-netproxy: their
 * getopt tables printed the way `agentrun --list-options` prints its own
 * (common/cli.h), for the man page test and shell completion. */
#ifndef NP_OPTLIST_H
#define NP_OPTLIST_H

#include <getopt.h>

/* When argv is exactly PROG --list-options: print opts, one a line
 * (NAME TAB - TAB arg|flag|optional), and exit. Otherwise return. */
void np_list_options_if_asked (int argc, char **argv, const struct option *opts);

#endif
