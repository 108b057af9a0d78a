/* Checks on the parsed model that a type check cannot make: enum values kept
 * as strings, absolute paths, duplicates, and rules across fields (runc's
 * user-namespace mapping rule, hostname needs a UTS namespace, ...). Each
 * error names the JSON path, rebuilt from the model's indexes. The linux
 * object's checks are in validate_linux.c. */
#include "config.h"
#include "util.h"
#include "names.h"
#include "parse_internal.h"
#include "spec.h"
#include "validate.h"

int
ar_validate_id (const char *id, ar_error **err)
{
  if (!id || !*id)
    return ar_err (err, 0, "container id: empty");
  size_t len = strlen (id);
  if (len > 1024)
    return ar_err (err, 0, "container id: %zu bytes, longer than 1024", len);
  if (id[0] == '.')
    return ar_err (err, 0, "container id \"%s\": must not start with '.'", id);
  for (const char *p = id; *p; p++)
    {
      unsigned char ch = (unsigned char) *p;
      bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'
                || ch == '+' || ch == '.' || ch == '-';
      if (!ok)
        return ar_err (err, 0, "container id \"%s\": character 0x%02x is not allowed (only A-Z a-z 0-9 _ + . -)",
                       len > 64 ? "..." : id, ch);
    }
  return 0;
}

int
ar_check_abs (struct ar_jctx *c, const char *path)
{
  if (!path || path[0] != '/')
    return ar_jerr (c, "\"%s\" is not an absolute path", path ? path : "");
  return 0;
}

int
ar_check_strv_abs (struct ar_jctx *c, const char *what, char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      ar_jpath_set (c, "%s[%zu]", what, i);
      if (ar_check_abs (c, v[i]) < 0)
        return -1;
    }
  return 0;
}

static int
check_caps (struct ar_jctx *c, const char *prefix, const char *set, char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (ar_capability_from_name (v[i]) < 0)
      {
        ar_jpath_set (c, "%scapabilities.%s[%zu]", prefix, set, i);
        return ar_jerr (c, "unknown capability \"%s\"", v[i]);
      }
  return 0;
}

static int
check_process_caps (struct ar_jctx *c, const char *prefix, const struct ar_caps *k)
{
  if (!k)
    return 0;
  if (check_caps (c, prefix, "bounding", k->bounding, k->n_bounding) < 0
      || check_caps (c, prefix, "effective", k->effective, k->n_effective) < 0
      || check_caps (c, prefix, "inheritable", k->inheritable, k->n_inheritable) < 0
      || check_caps (c, prefix, "permitted", k->permitted, k->n_permitted) < 0
      || check_caps (c, prefix, "ambient", k->ambient, k->n_ambient) < 0)
    return -1;
  return 0;
}

static int
check_rlimits (struct ar_jctx *c, const char *prefix, const struct ar_process *p)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      const struct ar_rlimit *r = &p->rlimits[i];
      ar_jpath_set (c, "%srlimits[%zu]", prefix, i);
      if (r->soft > r->hard)
        return ar_jerr (c, "soft limit %llu is above the hard limit %llu", (unsigned long long) r->soft,
                        (unsigned long long) r->hard);
      for (size_t j = 0; j < i; j++)
        if (p->rlimits[j].resource == r->resource)
          {
            ar_jpath_set (c, "%srlimits[%zu].type", prefix, i);
            return ar_jerr (c, "duplicate rlimit \"%s\"", r->type);
          }
    }
  return 0;
}

static int
check_scheduler (struct ar_jctx *c, const char *prefix, const struct ar_scheduler *s)
{
  if (!s)
    return 0;
  for (size_t i = 0; i < s->n_flags; i++)
    if (!ar_name_known (ar_sched_flags, s->flags[i]))
      {
        ar_jpath_set (c, "%sscheduler.flags[%zu]", prefix, i);
        return ar_jerr (c, "unknown flag \"%s\"", s->flags[i]);
      }
  return 0;
}

/* prefix: "process." in config.json, "" in process.json. */
int
ar_process_validate (struct ar_jctx *c, const struct ar_process *p, const char *prefix)
{
  ar_jpath_set (c, "%sargs", prefix);
  if (p->n_args == 0 || p->args[0][0] == '\0')
    return ar_jerr (c, "needs at least one non-empty argument");
  ar_jpath_set (c, "%scwd", prefix);
  if (ar_check_abs (c, p->cwd) < 0)
    return -1;
  for (size_t i = 0; i < p->n_env; i++)
    {
      const char *eq = strchr (p->env[i], '=');
      ar_jpath_set (c, "%senv[%zu]", prefix, i);
      if (!eq || eq == p->env[i])
        return ar_jerr (c, "\"%s\" is not NAME=VALUE", p->env[i]);
    }
  ar_jpath_set (c, "%suser.umask", prefix);
  if (p->user.has_umask && p->user.umask > 0777)
    return ar_jerr (c, "%#o is not a umask (at most 0777)", p->user.umask);
  return check_process_caps (c, prefix, p->capabilities) < 0 || check_rlimits (c, prefix, p) < 0
                 || check_scheduler (c, prefix, p->scheduler) < 0
             ? -1
             : 0;
}

int
ar_check_idmaps (struct ar_jctx *c, const char *what, const struct ar_idmap *m, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      ar_jpath_set (c, "%s[%zu].size", what, i);
      if (m[i].size == 0)
        return ar_jerr (c, "must be greater than 0");
      /* Ranges past 2^32 wrap in the kernel's eyes: refuse them here. */
      if ((uint64_t) m[i].container_id + m[i].size > UINT32_MAX + 1ULL
          || (uint64_t) m[i].host_id + m[i].size > UINT32_MAX + 1ULL)
        return ar_jerr (c, "range %u+%u or %u+%u goes past 2^32", m[i].container_id, m[i].size, m[i].host_id, m[i].size);
    }
  return 0;
}

static int
check_mounts (struct ar_jctx *c, const struct ar_spec *s)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const struct ar_mount *m = &s->mounts[i];
      char what[64];
      ar_jpath_set (c, "mounts[%zu].destination", i);
      if (ar_check_abs (c, m->destination) < 0)
        return -1;
      snprintf (what, sizeof what, "mounts[%zu].uidMappings", i);
      if (ar_check_idmaps (c, what, m->uid_mappings, m->n_uid_mappings) < 0)
        return -1;
      snprintf (what, sizeof what, "mounts[%zu].gidMappings", i);
      if (ar_check_idmaps (c, what, m->gid_mappings, m->n_gid_mappings) < 0)
        return -1;
      ar_jpath_set (c, "mounts[%zu]", i);
      if ((m->n_uid_mappings > 0) != (m->n_gid_mappings > 0))
        return ar_jerr (c, "an idmapped mount needs both uidMappings and gidMappings");
    }
  return 0;
}

static int
check_hooks (struct ar_jctx *c, const struct ar_hooks *h)
{
  for (int st = 0; st < AR_HOOK_N_STAGES; st++)
    for (size_t i = 0; i < h->n[st]; i++)
      {
        ar_jpath_set (c, "hooks.%s[%zu].path", ar_hook_stage_names[st], i);
        if (ar_check_abs (c, h->stage[st][i].path) < 0)
          return -1;
        ar_jpath_set (c, "hooks.%s[%zu].timeout", ar_hook_stage_names[st], i);
        if (h->stage[st][i].has_timeout && h->stage[st][i].timeout <= 0)
          return ar_jerr (c, "%d is not a timeout (must be greater than 0)", h->stage[st][i].timeout);
      }
  return 0;
}

int
ar_spec_validate (struct ar_jctx *c, const struct ar_spec *s)
{
  ar_jpath_set (c, "root.path");
  if (!s->root->path[0])
    return ar_jerr (c, "empty");
  if (ar_process_validate (c, s->process, "process.") < 0 || check_mounts (c, s) < 0 || check_hooks (c, &s->hooks) < 0
      || ar_linux_validate (c, s) < 0)
    return -1;
  for (size_t i = 0; i < s->n_annotations; i++)
    {
      ar_jpath_set (c, "annotations");
      if (!s->annotations[i].key[0])
        return ar_jerr (c, "empty key");
    }
  ar_jpath_set (c, "%s", "");
  return 0;
}
