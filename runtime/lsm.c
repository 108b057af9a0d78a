/* Refusing LSM labels. agentrun confines with namespaces, capabilities,
 * seccomp, no_new_privs and cgroups; it does not write /proc/self/attr or
 * pass context= mount options. Running a config that names a profile or a
 * label without applying it would hand the process less confinement than
 * its author asked for, so such a config is an error (invariant 4).
 *
 * podman: it fills apparmorProfile only when AppArmor is enabled on the host
 * (/sys/module/apparmor/parameters/enabled is "Y") and the SELinux labels
 * only when SELinux is enabled; on hosts with neither, podman's configs pass.
 * On an AppArmor host, `--security-opt apparmor=unconfined` (or
 * apparmor_profile = "unconfined" in containers.conf) makes podman ask for
 * "unconfined", which is accepted: it asks for no confinement. */
#include "config.h"
#include "lsm.h"
#include "util.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Whether the host runs AppArmor, for the message only: the answer is the
 * same either way, but it tells the user where the profile came from. */
static const char *
apparmor_host_note (void)
{
  cleanup_close int fd = open ("/sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC);
  char c = 0;
  if (fd < 0 || read (fd, &c, 1) != 1 || c != 'Y')
    return " (and AppArmor is not enabled on this host)";
  return "";
}

static bool
set (const char *v)
{
  return v && *v;
}

int
ar_lsm_check_process (const struct ar_process *p, const char *label, const char *prefix, ar_error **err)
{
  if (p && set (p->apparmor_profile) && strcmp (p->apparmor_profile, "unconfined") != 0)
    return ar_err (err, 0, "%s: %sapparmorProfile: AppArmor profiles are not applied by agentrun%s", label,
                   prefix, apparmor_host_note ());
  if (p && set (p->selinux_label))
    return ar_err (err, 0, "%s: %sselinuxLabel: SELinux labels are not applied by agentrun", label, prefix);
  return 0;
}

int
ar_lsm_check (const struct ar_spec *s, const char *label, ar_error **err)
{
  if (ar_lsm_check_process (s->process, label, "process.", err) < 0)
    return -1;
  if (s->linux_ && set (s->linux_->mount_label))
    return ar_err (err, 0, "%s: linux.mountLabel: SELinux mount labels are not applied by agentrun", label);
  return 0;
}
