/* The escape probes of `agentrun check`, run inside the sandbox as the
 * hidden command `agentrun __probe` (the agentrun binary is bound read-only
 * into the sandbox). Each probe prints one line on stdout:
 *   NAME <TAB> EXPECTED <TAB> GOT <TAB> VERDICT
 * with VERDICT "ok", "crossed", or "host" when only the host can tell (a
 * file written inside: did it land on the host?). */
#ifndef AR_PROBES_H
#define AR_PROBES_H

#include <stdbool.h>
#include <stddef.h>

#define AR_PROBE_BIN "/run/agentrun/agentrun" /* where check binds agentrun */
#define AR_PROBE_CMD "__probe"

/* Prefix of the files the write probes create ("<prefix><token>"). */
#define AR_PROBE_FILE_PREFIX ".agentrun-probe-"

/* What check tells the probes (cli/cmd_probe.c reads it from the command line). */
struct ar_probe_args {
  long host_pid;
  int loopback_port;
  int fd;
  char *allow_name;
  int allow_port;
  const char *deny_name;
  const char *token;
  const char **writes;
  size_t n_writes;
  const char **controls;
  size_t n_controls;
  const char **creds;
  size_t n_creds;
  bool landlock;
  const char **ll_writes;
  size_t n_ll_writes;
  const char *unix_socket; /* a host socket the sandbox can see, not a --unix-socket */
};

/* Anything open beyond stdio was inherited: the runtime must close it. Run
 * first, before anything of ours can open a file. */
void ar_probes_fds (const struct ar_probe_args *a);
/* Every other probe, one line each. */
void ar_probes_run (const struct ar_probe_args *a);

#endif
