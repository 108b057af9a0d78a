/* Checks on the "linux" object (see validate.c for the rest). */
#include "config.h"
#include "util.h"
#include "names.h"
#include "parse_internal.h"
#include "spec.h"
#include "validate.h"

/* The namespace entry of a type, or NULL. */
static const struct ar_namespace *
find_ns (const struct ar_linux *l, enum ar_ns_type t)
{
  for (size_t i = 0; l && i < l->n_namespaces; i++)
    if (l->namespaces[i].type == t)
      return &l->namespaces[i];
  return NULL;
}

static int
check_namespaces (struct ar_jctx *c, const struct ar_linux *l)
{
  for (size_t i = 0; i < l->n_namespaces; i++)
    {
      const struct ar_namespace *ns = &l->namespaces[i];
      for (size_t j = 0; j < i; j++)
        if (l->namespaces[j].type == ns->type)
          {
            ar_jpath_set (c, "linux.namespaces[%zu].type", i);
            return ar_jerr (c, "duplicate namespace type \"%s\"", ar_ns_type_name (ns->type));
          }
      ar_jpath_set (c, "linux.namespaces[%zu].path", i);
      if (ns->path && ar_check_abs (c, ns->path) < 0)
        return -1;
    }
  return 0;
}

/* runc's rule: mappings are given exactly when a new user namespace is
 * created; a joined one already has its maps. */
static int
check_user_mappings (struct ar_jctx *c, const struct ar_linux *l)
{
  const struct ar_namespace *user = find_ns (l, AR_NS_USER);
  bool new_userns = user && !user->path;
  if (ar_check_idmaps (c, "linux.uidMappings", l->uid_mappings, l->n_uid_mappings) < 0
      || ar_check_idmaps (c, "linux.gidMappings", l->gid_mappings, l->n_gid_mappings) < 0)
    return -1;
  if (new_userns)
    {
      ar_jpath_set (c, l->n_uid_mappings == 0 ? "linux.uidMappings" : "linux.gidMappings");
      if (l->n_uid_mappings == 0 || l->n_gid_mappings == 0)
        return ar_jerr (c, "a new user namespace needs uidMappings and gidMappings");
      return 0;
    }
  ar_jpath_set (c, l->n_uid_mappings ? "linux.uidMappings" : "linux.gidMappings");
  if (l->n_uid_mappings || l->n_gid_mappings)
    return ar_jerr (c, user ? "mappings cannot be set when joining an existing user namespace"
                            : "mappings need a new user namespace in linux.namespaces");
  return 0;
}

static int
check_time_offsets (struct ar_jctx *c, const struct ar_linux *l)
{
  const struct ar_namespace *t = find_ns (l, AR_NS_TIME);
  for (size_t i = 0; i < l->n_time_offsets; i++)
    {
      const struct ar_time_offset *o = &l->time_offsets[i];
      ar_jpath_set (c, "linux.timeOffsets.%s", o->clock);
      if (!ar_name_known (ar_time_clocks, o->clock))
        return ar_jerr (c, "unknown clock \"%s\" (monotonic or boottime)", o->clock);
      if (o->nanosecs >= 1000000000u)
        return ar_jerr (c, "nanosecs %u is not below 1000000000", o->nanosecs);
      if (!t || t->path)
        return ar_jerr (c, "time offsets need a new time namespace in linux.namespaces");
    }
  return 0;
}

static int
check_devices (struct ar_jctx *c, const struct ar_linux *l)
{
  for (size_t i = 0; i < l->n_devices; i++)
    {
      ar_jpath_set (c, "linux.devices[%zu].path", i);
      if (ar_check_abs (c, l->devices[i].path) < 0)
        return -1;
      ar_jpath_set (c, "linux.devices[%zu]", i);
      if (l->devices[i].major < 0 || l->devices[i].minor < 0)
        return ar_jerr (c, "negative device number");
    }
  return 0;
}

static bool
action_takes_errno (const char *action)
{
  return strcmp (action, "SCMP_ACT_ERRNO") == 0 || strcmp (action, "SCMP_ACT_TRACE") == 0;
}

static int
check_seccomp_rule (struct ar_jctx *c, const struct ar_seccomp *s, size_t i)
{
  const struct ar_seccomp_rule *r = &s->syscalls[i];
  ar_jpath_set (c, "linux.seccomp.syscalls[%zu].action", i);
  if (!ar_name_known (ar_seccomp_actions, r->action))
    return ar_jerr (c, "unknown action \"%s\"", r->action);
  if (strcmp (r->action, "SCMP_ACT_NOTIFY") == 0 && !s->listener_path)
    return ar_jerr (c, "SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath");
  ar_jpath_set (c, "linux.seccomp.syscalls[%zu].errnoRet", i);
  if (r->has_errno_ret && !action_takes_errno (r->action))
    return ar_jerr (c, "only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not %s", r->action);
  ar_jpath_set (c, "linux.seccomp.syscalls[%zu].names", i);
  if (r->n_names == 0)
    return ar_jerr (c, "needs at least one syscall name");
  for (size_t j = 0; j < r->n_names; j++)
    if (!r->names[j][0])
      {
        ar_jpath_set (c, "linux.seccomp.syscalls[%zu].names[%zu]", i, j);
        return ar_jerr (c, "empty syscall name");
      }
  for (size_t j = 0; j < r->n_args; j++)
    if (r->args[j].index >= 6)
      {
        ar_jpath_set (c, "linux.seccomp.syscalls[%zu].args[%zu].index", i, j);
        return ar_jerr (c, "%u is not a syscall argument index (0 to 5)", r->args[j].index);
      }
  return 0;
}

static int
check_seccomp (struct ar_jctx *c, const struct ar_seccomp *s)
{
  if (!s)
    return 0;
  ar_jpath_set (c, "linux.seccomp.defaultAction");
  if (!ar_name_known (ar_seccomp_actions, s->default_action))
    return ar_jerr (c, "unknown action \"%s\"", s->default_action);
  /* The kernel cannot notify for every syscall: the listener itself would hang. */
  if (strcmp (s->default_action, "SCMP_ACT_NOTIFY") == 0)
    return ar_jerr (c, "SCMP_ACT_NOTIFY cannot be the default action");
  ar_jpath_set (c, "linux.seccomp.defaultErrnoRet");
  if (s->has_default_errno_ret && !action_takes_errno (s->default_action))
    return ar_jerr (c, "only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not %s", s->default_action);
  for (size_t i = 0; i < s->n_architectures; i++)
    if (!ar_name_known (ar_seccomp_archs, s->architectures[i]))
      {
        ar_jpath_set (c, "linux.seccomp.architectures[%zu]", i);
        return ar_jerr (c, "unknown architecture \"%s\"", s->architectures[i]);
      }
  for (size_t i = 0; i < s->n_flags; i++)
    if (!ar_name_known (ar_seccomp_flags, s->flags[i]))
      {
        ar_jpath_set (c, "linux.seccomp.flags[%zu]", i);
        return ar_jerr (c, "unknown flag \"%s\"", s->flags[i]);
      }
  ar_jpath_set (c, "linux.seccomp.listenerPath");
  if (s->listener_path && ar_check_abs (c, s->listener_path) < 0)
    return -1;
  for (size_t i = 0; i < s->n_syscalls; i++)
    if (check_seccomp_rule (c, s, i) < 0)
      return -1;
  return 0;
}

static int
check_misc (struct ar_jctx *c, const struct ar_linux *l)
{
  ar_jpath_set (c, "linux.rootfsPropagation");
  if (l->rootfs_propagation && !ar_name_known (ar_rootfs_propagations, l->rootfs_propagation))
    return ar_jerr (c, "unknown propagation \"%s\"", l->rootfs_propagation);
  if (l->personality)
    {
      ar_jpath_set (c, "linux.personality.domain");
      if (!ar_name_known (ar_personality_domains, l->personality->domain))
        return ar_jerr (c, "unknown domain \"%s\" (LINUX or LINUX32)", l->personality->domain);
      /* The runtime-spec defines no personality flags yet. */
      ar_jpath_set (c, "linux.personality.flags[0]");
      if (l->personality->n_flags)
        return ar_jerr (c, "unknown flag \"%s\"", l->personality->flags[0]);
    }
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      ar_jpath_set (c, "linux.sysctl");
      if (!l->sysctl[i].key[0] || strstr (l->sysctl[i].key, "..") || l->sysctl[i].key[0] == '.'
          || l->sysctl[i].key[0] == '/')
        return ar_jerr (c, "\"%s\" is not a sysctl name", l->sysctl[i].key);
    }
  if (ar_check_strv_abs (c, "linux.maskedPaths", l->masked_paths, l->n_masked_paths) < 0
      || ar_check_strv_abs (c, "linux.readonlyPaths", l->readonly_paths, l->n_readonly_paths) < 0)
    return -1;
  return 0;
}

int
ar_linux_validate (struct ar_jctx *c, const struct ar_spec *s)
{
  const struct ar_linux *l = s->linux_;
  /* runc: setting a hostname needs a UTS namespace of the container's own. */
  ar_jpath_set (c, s->hostname && s->hostname[0] ? "hostname" : "domainname");
  if (((s->hostname && s->hostname[0]) || (s->domainname && s->domainname[0])) && !find_ns (l, AR_NS_UTS))
    return ar_jerr (c, "needs a uts namespace in linux.namespaces");
  if (!l)
    return 0;
  if (check_namespaces (c, l) < 0 || check_user_mappings (c, l) < 0 || check_time_offsets (c, l) < 0
      || check_devices (c, l) < 0 || check_seccomp (c, l->seccomp) < 0 || check_misc (c, l) < 0)
    return -1;
  return 0;
}
