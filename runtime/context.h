/* What the container library is told once per process, by whoever drives
 * it (the CLI fills it from its global options): where container state
 * lives, how cgroups are managed, and whether to run rootless. Every
 * library entry point that touches containers takes it; none reads the
 * CLI's option table. */
#ifndef AR_CONTEXT_H
#define AR_CONTEXT_H

#include <stdbool.h>

struct ar_ctx {
  const char *root; /* state root; NULL when none could be had (the sandbox makes its own) */
  const char *cgroup_manager; /* "cgroupfs" | "systemd" | "disabled" */
  const char *rootless; /* "true" | "false" | "auto" (ar_rootless_detect) */
  const char *log; /* log file, NULL: stderr only (ar_log_init) */
  const char *log_format; /* "text" | "json" */
  bool debug;
};

#endif
