/* The names config.json uses for seccomp actions, architectures and flags,
 * mapped to libseccomp and kernel values. The parser validates these too;
 * checking again here means a profile that reaches the compiler with a name
 * we cannot honour fails with its JSON path instead of being half applied. */
#include "config.h"
#include "seccomp.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <string.h>

#define LABEL "config.json"

int
ar_seccomp_action_value (const char *name, bool has_ret, unsigned int ret, uint32_t *action)
{
  /* runc's default for ERRNO and TRACE without errnoRet is EPERM. */
  unsigned int r = has_ret ? ret : EPERM;

  if (!name)
    return -1;
  if (strcmp (name, "SCMP_ACT_KILL") == 0 || strcmp (name, "SCMP_ACT_KILL_THREAD") == 0)
    *action = SCMP_ACT_KILL_THREAD;
  else if (strcmp (name, "SCMP_ACT_KILL_PROCESS") == 0)
    *action = SCMP_ACT_KILL_PROCESS;
  else if (strcmp (name, "SCMP_ACT_TRAP") == 0)
    *action = SCMP_ACT_TRAP;
  else if (strcmp (name, "SCMP_ACT_ERRNO") == 0)
    *action = SCMP_ACT_ERRNO (r & 0xffff);
  else if (strcmp (name, "SCMP_ACT_TRACE") == 0)
    *action = SCMP_ACT_TRACE (r & 0xffff);
  else if (strcmp (name, "SCMP_ACT_ALLOW") == 0)
    *action = SCMP_ACT_ALLOW;
  else if (strcmp (name, "SCMP_ACT_LOG") == 0)
    *action = SCMP_ACT_LOG;
  else if (strcmp (name, "SCMP_ACT_NOTIFY") == 0)
    *action = SCMP_ACT_NOTIFY;
  else
    return -1;
  return 0;
}

/* "SCMP_ARCH_X86_64" -> libseccomp's "x86_64". */
int
ar_seccomp_arch_value (const char *name, uint32_t *arch)
{
  static const char prefix[] = "SCMP_ARCH_";
  char low[32];
  size_t i, n;

  if (!name || strncmp (name, prefix, sizeof prefix - 1) != 0)
    return -1;
  name += sizeof prefix - 1;
  n = strlen (name);
  if (n == 0 || n >= sizeof low)
    return -1;
  for (i = 0; i <= n; i++)
    low[i] = (char) tolower ((unsigned char) name[i]);
  *arch = seccomp_arch_resolve_name (low);
  return *arch == 0 ? -1 : 0;
}

int
ar_seccomp_flag_value (const char *name, unsigned int *flag)
{
  static const struct {
    const char *name;
    unsigned int value;
  } flags[] = {
    { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
    { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
    { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
    { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
  };
  size_t i;

  for (i = 0; name && i < ARRAY_SIZE (flags); i++)
    if (strcmp (name, flags[i].name) == 0)
      {
        *flag = flags[i].value;
        return 0;
      }
  return -1;
}

static int
validate_rule (const struct ar_seccomp *sc, size_t i, ar_error **err)
{
  const struct ar_seccomp_rule *r = &sc->syscalls[i];
  uint32_t act;
  size_t j;

  if (ar_seccomp_action_value (r->action, r->has_errno_ret, r->errno_ret, &act) < 0)
    return ar_err (err, 0, LABEL ": linux.seccomp.syscalls[%zu].action: unknown action \"%s\"", i,
                   r->action ? r->action : "(missing)");
  if (act == SCMP_ACT_NOTIFY && !sc->listener_path)
    return ar_err (err, 0,
                   LABEL ": linux.seccomp.syscalls[%zu].action: SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath", i);
  if (r->n_names == 0)
    return ar_err (err, 0, LABEL ": linux.seccomp.syscalls[%zu].names: empty", i);
  for (j = 0; j < r->n_args; j++)
    {
      if (r->args[j].index > 5)
        return ar_err (err, 0, LABEL ": linux.seccomp.syscalls[%zu].args[%zu].index: %u is not an argument index (0-5)",
                       i, j, r->args[j].index);
      if ((unsigned) r->args[j].op > AR_OP_MASKED_EQ)
        return ar_err (err, 0, LABEL ": linux.seccomp.syscalls[%zu].args[%zu].op: unknown operator", i, j);
    }
  return 0;
}

int
ar_seccomp_validate (const struct ar_seccomp *sc, ar_error **err)
{
  uint32_t v;
  unsigned int f;
  size_t i;

  if (ar_seccomp_action_value (sc->default_action, sc->has_default_errno_ret, sc->default_errno_ret, &v) < 0)
    return ar_err (err, 0, LABEL ": linux.seccomp.defaultAction: unknown action \"%s\"",
                   sc->default_action ? sc->default_action : "(missing)");
  if (v == SCMP_ACT_NOTIFY)
    return ar_err (err, 0, LABEL ": linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action");
  for (i = 0; i < sc->n_architectures; i++)
    if (ar_seccomp_arch_value (sc->architectures[i], &v) < 0)
      return ar_err (err, 0,
                     LABEL ": linux.seccomp.architectures[%zu]: architecture \"%s\" unknown to libseccomp %u.%u.%u", i,
                     sc->architectures[i] ? sc->architectures[i] : "", seccomp_version ()->major,
                     seccomp_version ()->minor, seccomp_version ()->micro);
  for (i = 0; i < sc->n_flags; i++)
    if (ar_seccomp_flag_value (sc->flags[i], &f) < 0)
      return ar_err (err, 0, LABEL ": linux.seccomp.flags[%zu]: unknown flag \"%s\"", i,
                     sc->flags[i] ? sc->flags[i] : "");
  for (i = 0; i < sc->n_syscalls; i++)
    if (validate_rule (sc, i, err) < 0)
      return -1;
  return 0;
}
