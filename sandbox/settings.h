/* `--settings FILE`: the sandbox settings people already have, mapped onto
 * agentrun's sandbox options. Two layouts are read: Claude Code's settings
 * ({"sandbox": {"filesystem": {...}, "network": {...}, ...}}) and
 * sandbox-runtime's (srt) settings file ({"filesystem": {...},
 * "network": {...}}).
 *
 *   filesystem.allowWrite   -> --rw PATH
 *   filesystem.denyRead     -> --mask PATH
 *   filesystem.denyWrite    -> --ro PATH over a writable place (a deeper bind
 *                              wins), an --rw of that very path made read-only;
 *                              elsewhere the host is not writable anyway; the
 *                              workspace and --out themselves cannot be denied
 *   network.allowedDomains  -> --allow NAME (port 443)
 *   network.deniedDomains   -> removes any matching --allow, and is kept to refuse
 *                              names a wildcard allow would route (a deny wins)
 *   network.allowUnixSockets -> --unix-socket PATH
 *   failIfUnavailable       -> agentrun always fails closed
 *
 * Path forms: "//x" and "/x" are /x, "~/x" is under $HOME, anything else is
 * taken from the current folder. What cannot be mapped is printed, one line
 * per setting. An allow that cannot be mapped is dropped (the sandbox stays
 * stricter); a deny that cannot be enforced is an error, unless it is moot
 * (nothing it names is reachable or writable in the sandbox: said at
 * --debug). */
#ifndef AR_SETTINGS_H
#define AR_SETTINGS_H

#include "error.h"
#include "sandbox.h"

/* Apply the settings file at path to sb; call it after the command-line
 * options, so that denies also apply to what they added. */
int ar_settings_load (struct ar_sandbox *sb, const char *path, ar_error **err);

#endif
