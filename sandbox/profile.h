/* agentrun profile files: every `agentrun sandbox` option in one JSON object
 * a team can commit next to its code, read with --profile FILE.
 *
 *   { "workspace": ".", "out": "build", "ro": ["/srv/data"], "rw": [],
 *     "mask": ["/etc/secret"], "allow": ["api.example.com", "pypi.org:443"],
 *     "no_network": false, "audit": "audit.jsonl", "env": ["LANG", "CI=1"],
 *     "memory": "2g", "pids": 512, "cpus": 1.5,
 *     "unix_sockets": ["/run/user/1000/ssh-agent.sock"] }
 *
 * Strict: an unknown key or a wrong type is an error naming the file and the
 * JSON path, so a misspelt restriction cannot be dropped in silence.
 * Relative paths are taken from the profile's own folder (the file means the
 * same whoever runs it, from wherever). The profile is applied before the
 * command line: a single-valued option given there (--workspace, --out,
 * --audit, --memory, --pids, --cpus) replaces the profile's, a list option
 * (--ro, --rw, --mask, --allow, --env, --unix-socket) adds to it; no_network can only be
 * turned on. */
#ifndef AR_PROFILE_H
#define AR_PROFILE_H

#include <yajl/yajl_tree.h>
#include "error.h"
#include "sandbox.h"

#define AR_PROFILE_MAX_SIZE (1024 * 1024)

/* Read and apply the profile at path to sb (through ar_sandbox_opt). */
int ar_profile_load (struct ar_sandbox *sb, const char *path, ar_error **err);
/* --agent NAME: the preset NAME.json (a profile) from the presets folder. */
int ar_profile_load_preset (struct ar_sandbox *sb, const char *name, ar_error **err);
/* The preset named as the command (`claude` for `claude -p ...`), where
 * there is one: its "folders" alone, so that an agent run without --agent
 * still finds its project folder as it expects it (an error reading below
 * a file there is not "no settings" to it). Nothing else of it applies:
 * endpoints, state and variables are the person's to ask for. */
int ar_profile_command_folders (struct ar_sandbox *sb, ar_error **err);

/* Go over the command line once more (p is a copy from its start) and call
 * load for the argument of each option `id`: --profile before the other
 * options are applied, --settings after them. */
int ar_profile_apply_opts (struct ar_sandbox *sb, struct ar_optparser p, int id,
                           int (*load) (struct ar_sandbox *, const char *, ar_error **), ar_error **err);

/* The help lines of --profile and --settings. */
extern const char ar_profile_opts_help[];

/* Read a small JSON file whose root is an object (regular file, bounded
 * size); *out is freed with ar_json_tree_free. Shared with settings.c. With
 * sb, the bytes read are kept as one of its policy files (sbpaths.h pins
 * them), and the path is checked for planted symlinks. */
int ar_profile_read_json (struct ar_sandbox *sb, const char *path, const char *label, yajl_val *out, ar_error **err);

/* Add endpoint ("NAME:PORT") to the "allow" list of the profile at path,
 * keeping its other keys; the file is created if missing and replaced
 * atomically (a new file renamed over it), or with in_place rewritten in
 * its own inode: one the run holds read-only by a mount on it, which a
 * rename over it would take away. */
int ar_profile_append_allow (const char *path, const char *endpoint, bool in_place, ar_error **err);

#endif
