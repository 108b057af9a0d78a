/* `agentrun sandbox`: the agent profile (sandbox/agent.h) filled from the host
 * (who is calling, which system folders exist, where the helpers are), its
 * bundle written into a private folder, the relay started, the container
 * run in the foreground, and everything removed afterwards.
 * `agentrun spec --agent` and `agentrun check` share the options and the
 * bundle writer, so the three commands produce the same confinement. */
#ifndef AR_SANDBOX_H
#define AR_SANDBOX_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "agent.h"
#include "asker.h"
#include "cli.h"
#include "context.h"
#include "error.h"

/* Option ids of the sandbox options; commands that embed them use ids below
 * AR_SB_OPT_BASE for their own. */
enum {
  AR_SB_OPT_BASE = 1000,
  AR_SB_WORKSPACE,
  AR_SB_OUT,
  AR_SB_RO,
  AR_SB_RW,
  AR_SB_MASK,
  AR_SB_ALLOW,
  AR_SB_NO_NETWORK,
  AR_SB_AUDIT,
  AR_SB_ENV,
  AR_SB_MEMORY,
  AR_SB_PIDS,
  AR_SB_CPUS,
  AR_SB_BUNDLE,
  AR_SB_UNIX_SOCKET,
  AR_SB_ALLOW_HOME,
  AR_SB_ALLOW_SYSTEM_PATH,
  AR_SB_TMP_SIZE,
  AR_SB_HOME_SIZE,
  AR_SB_NOFILE,
  AR_SB_NET_MAX_CONNS,
  AR_SB_NET_IDLE_TIMEOUT,
  AR_SB_SHM_SIZE,
  AR_SB_ALLOW_WRITE,
  AR_SB_USER,
  AR_SB_HOME,
  AR_SB_AGENT,
  AR_SB_QUIET,
  AR_SB_CONNECT_PROXY,
  AR_SB_INOTIFY,
  AR_SB_ALLOW_SYSV_IPC,
  AR_SB_MAX_SOCKETS,
  AR_SB_STATE, /* profiles and presets only: "state", paths under the home kept between runs */
  AR_SB_FOLDERS, /* profiles and presets only: "folders", protected folders the agent reads below */
};
/* The options, terminated by a NULL name; AR_SB_N_OPTS entries before it. */
#define AR_SB_N_OPTS 31
/* The relay's defaults for a sandbox: connections open at once, and the
 * seconds one may move no byte before it is cut. */
#define AR_SB_DEFAULT_NET_MAX_CONNS 1024
#define AR_SB_DEFAULT_NET_IDLE_TIMEOUT 900
extern const struct ar_opt ar_sandbox_opts[AR_SB_N_OPTS + 1];
extern const char ar_sandbox_opts_help[];

/* A path as given, checked when every option is in (sbpaths.h). */
enum ar_sb_note_kind { AR_NOTE_BIND, AR_NOTE_RO, AR_NOTE_MASK, AR_NOTE_POLICY };
struct ar_sb_note {
  char *opt;
  char *path;
  enum ar_sb_note_kind kind;
};
/* A --profile/--settings file as read (the bytes parsed are the bytes pinned). */
struct ar_sb_policy {
  char *path;
  char *text;
  size_t len;
};
/* A placeholder made on the host so that a protected name cannot be created. */
struct ar_sb_placed {
  char *path;
  dev_t dev;
  ino_t ino;
  off_t size; /* a file's: what it holds as made */
  bool dir;
};

/* A folder kept open while names are made or removed in it, one after
 * another (dir NULL: none). */
struct ar_sb_dirfd {
  char *dir;
  int fd;
};

struct ar_sandbox {
  struct ar_agent_opts prof;
  char **env_args;
  size_t n_env_args; /* --env as given */
  char *bundle_out; /* --bundle DIR */
  bool has_pids;
  /* read-write binds of the caller's home / of a system folder, on purpose */
  bool allow_home, allow_system_path;
  unsigned long long net_max_conns, net_idle_timeout; /* for the relay */
  bool has_user;
  uid_t user_uid;
  gid_t user_gid; /* --user UID[:GID] (root only) */
  bool as_nobody; /* root without sudo nor --user: nobody */
  bool quiet; /* --quiet: no notes, no blocked lines */
  char *home_arg; /* --home DIR as given */
  char **state;
  size_t n_state; /* "state" of presets: paths under the home, kept */
  char **state_of;
  size_t n_state_of; /* the preset each came from ("profile": a profile's own) */
  char **folders;
  size_t n_folders; /* "folders": missing ones held by a folder, not a file */
  int preset_depth; /* a preset does not name another */
  const char *preset_name; /* the preset being loaded */
  char **pass_env;
  size_t n_pass_env; /* --env NAME: NAME=VALUE from the caller, set at exec only */
  /* rootfs symlinks standing for host ones (merged-/usr: /bin -> usr/bin) */
  char **link_name;
  char **link_target;
  size_t n_links;
  /* run time */
  char *id; /* sandbox-<random> */
  char *tmpdir; /* the private folder holding everything */
  char *state_root; /* no --root nor XDG_RUNTIME_DIR: <tmpdir>/state */
  pid_t relay_pid;
  int stdout_fd; /* >= 0: the container's stdout goes there (check) */
  int stdin_fd; /* >= 0: the container's stdin comes from there */
  bool no_terminal; /* never a pty, even when stdin is a terminal (check) */
  int tty; /* 1: a pty (-t), -1: none (--no-tty), 0: when stdin and
                                           stdout are both terminals */
  bool runtime_validates; /* the bundle goes straight to the runtime, which parses
                                           and validates it: no need to do it twice */
  bool ask; /* --ask: new names are asked about (asker.h) */
  char *save_profile; /* --save-profile FILE: where `always` answers go */
  struct ar_asker asker;
  /* check: the runtime binary, copied into the bundle and bound read-only
   * at AR_PROBE_BIN. A copy, because the original may sit under folders the
   * sandbox's uid cannot walk (a 0700 home or build folder). */
  char *probe_src;
  /* paths the agent can plant (sbpaths.h) */
  struct ar_sb_note *notes;
  size_t n_notes;
  struct ar_sb_policy *policies;
  size_t n_policies;
  char **allow_write;
  size_t n_allow_write; /* --allow-write: protected names lifted */
  struct ar_sb_placed *placed;
  size_t n_placed;
  struct ar_sb_dirfd placing; /* the folder of the last placeholder made */
  /* a shared flock on each protected name bound (and each placeholder)
   * while the run lasts: another run's cleanup removes a placeholder only
   * under an exclusive one, so never one this run has bound */
  int *held;
  size_t n_held;
  char *new_git; /* WS/.git when it did not exist before the run */
  /* the writable folders whose repositories were looked for, and the git
   * folders found below them (absolute): a new one is said after the run */
  char **git_roots;
  size_t n_git_roots;
  char **git_known;
  size_t n_git_known;
  int audit_fd; /* --audit, opened once by the invoking user */
  bool bundle_only; /* spec --agent, sandbox --bundle: no run, so no
                                                    placeholders (nobody would remove them) */
  size_t n_unplaced; /* protected names left out for that */
};

/* The commands that take the sandbox options (sandbox, check, spec --agent)
 * parse them in one place: --profile, then the command line, then
 * --settings. Ids of their own options: AR_SBC_HELP and the AR_SBC_* below
 * are handled here, others (below AR_SBC_PROFILE) go to own_opt. */
enum { AR_SBC_HELP = 1, AR_SBC_PROFILE = 50, AR_SBC_SETTINGS, AR_SBC_ASK, AR_SBC_SAVE_PROFILE };
struct ar_sb_cmd {
  const struct ar_opt *own;
  size_t n_own;
  void (*usage) (FILE *);
  int (*own_opt) (void *data, int id, const char *arg, ar_error **err);
  void *data;
  int drop_id; /* a sandbox option the command does not take (check: AR_SB_BUNDLE) */
};
/* 0 with *first_arg the first argument after the options, 1 when --help
 * was answered, -1 when an error was logged. */
int ar_sandbox_parse_args (struct ar_sandbox *sb, const struct ar_sb_cmd *c, int argc, char **argv, int *first_arg);

/* contrib/seccomp/agent.json, built in (sandbox/agent_profile.c, generated). */
extern const char ar_agent_seccomp_json[];
extern const size_t ar_agent_seccomp_len;

void ar_sandbox_init (struct ar_sandbox *sb);
void ar_sandbox_free (struct ar_sandbox *sb);
/* One parsed option (id from ar_sandbox_opts). */
int ar_sandbox_opt (struct ar_sandbox *sb, int id, const char *arg, ar_error **err);
/* The command to run (copied). */
void ar_sandbox_set_args (struct ar_sandbox *sb, char **argv, int argc);
/* Look the host up and complete the profile: identity, home, environment,
 * system folders, helpers, seccomp profile. After this, prof is complete but
 * for bundle and relay_dir. */
int ar_sandbox_prepare (struct ar_sandbox *sb, ar_error **err);
/* Write the bundle into dir (created 0700 if missing; must be empty otherwise):
 * rootfs/ with its mount points, hosts, resolv.conf, config.json. relay_dir is
 * where the relay's sockets will be. */
int ar_sandbox_write_bundle (struct ar_sandbox *sb, const char *dir, const char *relay_dir, ar_error **err);
/* The whole run: private folder, bundle, relay, container in the foreground,
 * signals forwarded, cleanup. *status is the command's exit status. */
int ar_sandbox_run (struct ar_ctx *ctx, struct ar_sandbox *sb, int *status, ar_error **err);
/* The exit status when the sandbox could not run the command. */
#define AR_SANDBOX_FAILED 125
/* Rootless with no cgroup the user may write: memory and CPU caps are an
 * error, the pids cap becomes RLIMIT_NPROC. */
int ar_sandbox_fit_limits (struct ar_ctx *ctx, struct ar_sandbox *sb, ar_error **err);

/* Host policies that forbid user namespaces: 0 when none, else -1 with a
 * message saying what to change. */
int ar_sandbox_check_userns (ar_error **err);
/* A helper binary next to /proc/self/exe, else in PATH (absolute, caller frees). */
char *ar_sandbox_find_helper (const char *name, ar_error **err);

#endif
