/* The agent profile: sandbox options -> config.json text.
 * Pure generation: everything that depends on the host (who is calling,
 * which system paths are symlinks, where the helper binaries are) is looked
 * up by the caller (sandbox/sandbox.c) and handed in here, so the profile
 * is one function of its inputs and `agentrun spec --agent` and
 * `agentrun sandbox` cannot drift apart. */
#ifndef AR_AGENT_H
#define AR_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "error.h"

#define AR_AGENT_DEFAULT_PIDS 4096
#define AR_AGENT_DEFAULT_PORT 443
#define AR_AGENT_DNS_ADDR "127.0.0.53"
#define AR_AGENT_MAX_ENDPOINTS 250 /* 127.77.0.2 .. 127.77.0.251 */
#define AR_AGENT_CPU_PERIOD 100000 /* microseconds */
/* TCP buffers of the sandbox's network namespace: min, default, max bytes
 * (the kernel's defaults but a 1 MiB max; its sockets are loopback ones) */
#define AR_AGENT_TCP_RMEM "4096 131072 1048576"
#define AR_AGENT_TCP_WMEM "4096 16384 1048576"
#define AR_AGENT_SHM_SIZE (256LL << 20)

/* One --allow NAME[:PORT][=UPSTREAM_HOST:PORT]. */
struct ar_agent_endpoint {
  char *name;
  int port;
  char *upstream; /* "HOST:PORT" or NULL (the relay connects to NAME:PORT) */
  char addr[16]; /* loopback address inside the sandbox, set by ar_agent_assign_addrs */
};

/* A bind of a host path into the sandbox at the same path. */
struct ar_agent_bind {
  char *path; /* inside, and on the host unless src says otherwise */
  char *src; /* NULL, or the host path bound at path (a preset's state) */
  bool writable;
  bool socket; /* --unix-socket: the only sockets connect(2) may reach */
  bool scratch; /* a tmpfs of the run's own over the held folder, filled with
                 * its content: the command writes there, the host's folder
                 * never changes, and what was written is gone after the run */
};

struct ar_agent_opts {
  char *bundle; /* absolute bundle folder (holds hosts, resolv.conf) */
  /* filesystem */
  char *workspace; /* absolute, required */
  char *out; /* absolute or NULL */
  bool workspace_ro; /* `--ro WORKSPACE`, or settings with allowWrite: [] */
  struct ar_agent_bind *binds;
  size_t n_binds; /* --ro / --rw, in command-line order */
  char **masks;
  size_t n_masks; /* --mask, absolute */
  /* the host's system folders: those that are symlinks are recreated as
   * symlinks in the rootfs (by the caller), the others are bound read-only */
  char **sys_dirs;
  size_t n_sys_dirs;
  /* network */
  struct ar_agent_endpoint *allow;
  size_t n_allow;
  bool no_network;
  bool connect_proxy; /* the netproxy's HTTP CONNECT proxy, *_PROXY set */
  char **deny;
  size_t n_deny; /* NAME or *.DOMAIN refused whatever allows it */
  bool ask_person; /* --ask: a lookup may wait for a person's answer */
  char *netproxy; /* absolute path of agentrun-netproxy */
  char *netproxy_user; /* "UID:GID" its server drops to (root runs), or NULL */
  char *relay_dir; /* host folder with the relay's sockets */
  char *ask_socket; /* sandbox --ask: where the netproxy asks about new names */
  char *audit; /* --audit FILE (absolute) or NULL */
  char *audit_fd_ref; /* "PID:FD": the log as opened by PID, reached through
                                                   /proc (the netproxy never opens the path) */
  /* process */
  char **args;
  size_t n_args;
  char **env;
  size_t n_env; /* NAME=VALUE, already resolved */
  bool terminal;
  uid_t uid;
  gid_t gid;
  char *home; /* home path, both on the host and inside */
  char *home_src; /* --home DIR: bound read-write at home; NULL: a tmpfs */
  char **cred_homes;
  size_t n_cred_homes; /* homes whose credential folders are masked */
  char *user; /* user name, for USER */
  char *shell; /* its login shell (/bin/sh for none or nologin), for SHELL */
  /* resources */
  bool has_memory;
  int64_t memory; /* bytes */
  bool memory_unlimited; /* --memory unlimited (or 0): no default limit */
  bool memory_default; /* memory is the default, not asked for */
  bool memory_swap; /* swap is accounted: memory+swap capped at memory too */
  int64_t pids; /* > 0 */
  bool pids_rlimit; /* rootless without a cgroup: pids as RLIMIT_NPROC */
  bool has_cpus;
  int64_t cpu_quota; /* microseconds per AR_AGENT_CPU_PERIOD */
  int64_t tmp_size, home_size; /* bytes of the /tmp and home tmpfs, > 0 */
  long long nofile; /* RLIMIT_NOFILE, soft and hard, > 0 */
  /* inet sockets alive at once (run.agentrun.max-sockets), > 0 unless
   * max_sockets_unlimited (--max-sockets unlimited: no cap) */
  long long max_sockets;
  bool max_sockets_unlimited;
  /* the sandbox's user namespace's own budgets (user.max_inotify_*,
   * user.max_fanotify_*), each a part of its user's on the host: > 0 */
  long long inotify_instances, inotify_watches, fanotify_groups, fanotify_marks;
  int64_t kernel_tcp; /* cgroup v1: TCP buffers' own limit in bytes, 0: none */
  /* SysV IPC of the sandbox's IPC namespace: shared memory at most shm_size
   * bytes, queues and semaphores a few. Written by a root runtime, or, run
   * by a plain user, by the root of the outer user namespace of a nested
   * one: without a root mapped, those sysctls are the host root's. */
  bool ipc_limits;
  /* run by a plain user: the user namespace maps the user's ids as its root
   * and the agent runs in a nested one mapping them back (the runtime's
   * namespaces.h), so that the IPC limits above can be had */
  bool nested_userns;
  int64_t shm_size;
  /* without ipc_limits, shmget/msgget/semget are refused (ENOSPC) unless
   * this is set (--allow-sysv-ipc): then SysV IPC is unbounded */
  bool allow_sysv_ipc;
  /* the agent seccomp profile, a JSON object (text of contrib/seccomp/agent.json) */
  char *seccomp_json;
  size_t seccomp_len;
  /* extra read-only file binds (host path -> container path), for `agentrun check` */
  char **extra_src;
  char **extra_dst;
  size_t n_extra;
  /* Landlock (the run.agentrun.landlock annotation): 0 off, else the ABI
   * version of the kernel it is for (>= 6 adds the abstract-socket scope) */
  int landlock_abi;
  /* config.json for the runtime only (sandbox runs it at once): no
   * indentation, a third of the bytes to write, scan and parse */
  bool compact;
};

/* Parse "NAME[:PORT][=HOST:PORT]" into *ep (fields owned); NAME may be
 * "*.DOMAIN", a wildcard: any name below DOMAIN, routed when looked up. */
int ar_agent_parse_endpoint (const char *arg, struct ar_agent_endpoint *ep, ar_error **err);
static inline bool
ar_agent_wildcard (const struct ar_agent_endpoint *e)
{
  return e->name[0] == '*';
}
/* The proxy address of --connect-proxy, as HTTPS_PROXY gives it. */
#define AR_AGENT_PROXY_URL "http://127.77.0.1:3128"
/* "512m", "2G", "1048576" -> bytes. */
int ar_agent_parse_size (const char *arg, int64_t *out, ar_error **err);
/* The same for option opt, refusing sizes below min bytes. */
int ar_agent_parse_size_for (const char *opt, const char *arg, int64_t min, int64_t *out, ar_error **err);
/* "1.5" -> quota in microseconds per AR_AGENT_CPU_PERIOD. */
int ar_agent_parse_cpus (const char *arg, int64_t *quota, ar_error **err);
/* Give each endpoint its loopback address (127.77.0.2, .3, ... by order; the
 * same NAME with two ports shares one address). */
int ar_agent_assign_addrs (struct ar_agent_opts *o, ar_error **err);

/* The texts of /etc/hosts and /etc/resolv.conf for the sandbox (caller frees). */
char *ar_agent_hosts_text (const struct ar_agent_opts *o);
char *ar_agent_resolv_text (const struct ar_agent_opts *o);

/* The credential paths masked under one home (NULL-terminated, static). */
extern const char *const ar_agent_cred_paths[];
/* System files masked whatever the options. */
extern const char *const ar_agent_sys_masks[];

/* config.json text for the options (NUL-terminated, caller frees). The
 * bundle layout it refers to: rootfs/ (root.path), hosts, resolv.conf. */
int ar_agent_generate (const struct ar_agent_opts *o, char **json, size_t *len, ar_error **err);

void ar_agent_opts_free (struct ar_agent_opts *o);

#endif
