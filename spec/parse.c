/* config.json and process.json into the model: the document root, root,
 * mounts, process, hooks. The linux object is in parse_linux.c. Types,
 * required fields and ranges are checked here; checks across fields are in
 * validate.c, run before a parse is reported as successful. */
#include "config.h"
#include "names.h"
#include "parse_internal.h"
#include "spec.h"
#include "strio.h"
#include "util.h"

#include <fcntl.h>
#include <sys/stat.h>

int
ar_parse_idmap (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_idmap *m = out;
  if (get_u32 (c, o, "containerID", true, &m->container_id, NULL) < 0
      || get_u32 (c, o, "hostID", true, &m->host_id, NULL) < 0 || get_u32 (c, o, "size", true, &m->size, NULL) < 0)
    return -1;
  return 0;
}

static int
parse_root (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_root *r = out;
  if (ar_json_str (c, o, "path", true, &r->path) < 0)
    return -1;
  return ar_json_bool (c, o, "readonly", false, &r->readonly, NULL);
}

static int
parse_mount (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_mount *m = out;
  if (ar_json_str (c, o, "destination", true, &m->destination) < 0 || ar_json_str (c, o, "type", false, &m->type) < 0
      || ar_json_str (c, o, "source", false, &m->source) < 0
      || ar_json_strv (c, o, "options", false, &m->options, &m->n_options) < 0
      || ar_json_objarray (c, o, "uidMappings", false, sizeof (struct ar_idmap), ar_parse_idmap,
                           (void **) &m->uid_mappings, &m->n_uid_mappings)
             < 0
      || ar_json_objarray (c, o, "gidMappings", false, sizeof (struct ar_idmap), ar_parse_idmap,
                           (void **) &m->gid_mappings, &m->n_gid_mappings)
             < 0)
    return -1;
  return 0;
}

static int
parse_hook (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_hook *h = out;
  if (ar_json_str (c, o, "path", true, &h->path) < 0 || ar_json_strv (c, o, "args", false, &h->args, &h->n_args) < 0
      || ar_json_strv (c, o, "env", false, &h->env, &h->n_env) < 0)
    return -1;
  return get_int (c, o, "timeout", INT32_MIN, INT32_MAX, &h->timeout, &h->has_timeout);
}

static int
parse_hooks (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_hooks *h = out;
  for (int i = 0; i < AR_HOOK_N_STAGES; i++)
    if (ar_json_objarray (c, o, ar_hook_stage_names[i], false, sizeof (struct ar_hook), parse_hook,
                          (void **) &h->stage[i], &h->n[i])
        < 0)
      return -1;
  return 0;
}

static int
parse_console_size (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_console_size *s = out;
  if (get_u32 (c, o, "height", true, &s->height, NULL) < 0 || get_u32 (c, o, "width", true, &s->width, NULL) < 0)
    return -1;
  return 0;
}

static int
parse_user (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_user *u = out;
  yajl_val gids;
  if (get_u32 (c, o, "uid", true, &u->uid, NULL) < 0 || get_u32 (c, o, "gid", true, &u->gid, NULL) < 0
      || get_u32 (c, o, "umask", false, &u->umask, &u->has_umask) < 0
      || ar_json_str (c, o, "username", false, &u->username) < 0)
    return -1;
  int r = ar_json_member (c, o, "additionalGids", yajl_t_array, &gids);
  if (r <= 0)
    return r;
  size_t old = ar_jpath_key (c, "additionalGids");
  u->additional_gids = xmalloc0 (gids->u.array.len * sizeof *u->additional_gids);
  for (size_t i = 0; i < gids->u.array.len && r >= 0; i++)
    {
      yajl_val g = gids->u.array.values[i];
      uint64_t v = 0;
      size_t old2 = ar_jpath_index (c, i);
      if (!YAJL_IS_NUMBER (g))
        r = ar_jerr (c, "expected a number, got %s", ar_json_type_name (g));
      else
        r = ar_json_node_uint (c, g, UINT32_MAX, &v);
      ar_jpath_pop (c, old2);
      u->additional_gids[i] = (uint32_t) v;
      u->n_additional_gids = i + 1;
    }
  ar_jpath_pop (c, old);
  return r < 0 ? -1 : 0;
}

static int
parse_caps (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_caps *k = out;
  if (ar_json_strv (c, o, "bounding", false, &k->bounding, &k->n_bounding) < 0
      || ar_json_strv (c, o, "effective", false, &k->effective, &k->n_effective) < 0
      || ar_json_strv (c, o, "inheritable", false, &k->inheritable, &k->n_inheritable) < 0
      || ar_json_strv (c, o, "permitted", false, &k->permitted, &k->n_permitted) < 0
      || ar_json_strv (c, o, "ambient", false, &k->ambient, &k->n_ambient) < 0)
    return -1;
  return 0;
}

static int
parse_rlimit (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_rlimit *r = out;
  if (ar_json_str (c, o, "type", true, &r->type) < 0)
    return -1;
  r->resource = ar_rlimit_from_name (r->type);
  if (r->resource < 0)
    return ar_jerr_at (c, "type", "unknown rlimit \"%s\"", r->type);
  if (get_u64 (c, o, "soft", true, &r->soft, NULL) < 0 || get_u64 (c, o, "hard", true, &r->hard, NULL) < 0)
    return -1;
  return 0;
}

static int
parse_io_priority (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_io_priority *p = out;
  if (ar_json_str (c, o, "class", true, &p->class_name) < 0)
    return -1;
  p->class = ar_ioprio_class_from_name (p->class_name);
  if (p->class < 0)
    return ar_jerr_at (c, "class", "unknown class \"%s\"", p->class_name);
  return get_int (c, o, "priority", 0, 7, &p->priority, NULL);
}

static int
parse_scheduler (struct ar_jctx *c, yajl_val o, void *out)
{
  struct ar_scheduler *s = out;
  int nice = 0, prio = 0;
  if (ar_json_str (c, o, "policy", true, &s->policy) < 0)
    return -1;
  s->policy_num = ar_sched_policy_from_name (s->policy);
  if (s->policy_num < 0)
    return ar_jerr_at (c, "policy", "unknown policy \"%s\"", s->policy);
  if (get_int (c, o, "nice", -20, 19, &nice, NULL) < 0 || get_int (c, o, "priority", 0, 99, &prio, NULL) < 0
      || ar_json_strv (c, o, "flags", false, &s->flags, &s->n_flags) < 0
      || get_u64 (c, o, "runtime", false, &s->runtime, NULL) < 0
      || get_u64 (c, o, "deadline", false, &s->deadline, NULL) < 0
      || get_u64 (c, o, "period", false, &s->period, NULL) < 0)
    return -1;
  s->nice = nice;
  s->priority = prio;
  return 0;
}

/* process.json of exec may leave the user out (uid and gid 0), as runc's
 * does; config.json must name it (runtime-spec). */
static int
parse_process (struct ar_jctx *c, yajl_val o, struct ar_process *p, bool user_required)
{
  if (ar_json_bool (c, o, "terminal", false, &p->terminal, NULL) < 0
      || ar_json_object (c, o, "consoleSize", false, parse_console_size, &p->console_size) < 0
      || ar_json_object (c, o, "user", user_required, parse_user, &p->user) < 0
      || ar_json_strv (c, o, "args", true, &p->args, &p->n_args) < 0
      || ar_json_str (c, o, "commandLine", false, &p->command_line) < 0
      || ar_json_strv (c, o, "env", false, &p->env, &p->n_env) < 0 || ar_json_str (c, o, "cwd", true, &p->cwd) < 0
      || ar_json_object_alloc (c, o, "capabilities", false, sizeof *p->capabilities, parse_caps, (void **) &p->capabilities)
             < 0
      || ar_json_objarray (c, o, "rlimits", false, sizeof *p->rlimits, parse_rlimit, (void **) &p->rlimits, &p->n_rlimits)
             < 0
      || ar_json_bool (c, o, "noNewPrivileges", false, &p->no_new_privileges, NULL) < 0
      || get_int (c, o, "oomScoreAdj", -1000, 1000, &p->oom_score_adj, &p->has_oom_score_adj) < 0
      || ar_json_str (c, o, "apparmorProfile", false, &p->apparmor_profile) < 0
      || ar_json_str (c, o, "selinuxLabel", false, &p->selinux_label) < 0
      || ar_json_object_alloc (c, o, "ioPriority", false, sizeof *p->io_priority, parse_io_priority,
                               (void **) &p->io_priority)
             < 0
      || ar_json_object_alloc (c, o, "scheduler", false, sizeof *p->scheduler, parse_scheduler, (void **) &p->scheduler)
             < 0)
    return -1;
  yajl_val cs;
  p->has_console_size = ar_json_member (c, o, "consoleSize", yajl_t_object, &cs) > 0;
  return 0;
}

int
ar_parse_process_obj (struct ar_jctx *c, yajl_val o, void *out)
{
  return parse_process (c, o, out, true);
}

/* "1.M.P" with M in 0..3, optionally followed by "-pre" or "+build" (runc
 * itself writes "1.0.2-dev"). */
static int
check_oci_version (struct ar_jctx *c, const char *v)
{
  unsigned major, minor, patch;
  int end = 0;
  if (sscanf (v, "%u.%u.%u%n", &major, &minor, &patch, &end) != 3 || (v[end] && v[end] != '-' && v[end] != '+')
      || !(v[0] >= '0' && v[0] <= '9'))
    return ar_jerr_at (c, "ociVersion", "\"%s\" is not a version (MAJOR.MINOR.PATCH)", v);
  if (major != 1 || minor > 3)
    return ar_jerr_at (c, "ociVersion", "version \"%s\" is not supported (1.0.0 to 1.3.x)", v);
  return 0;
}

static int
parse_spec_obj (struct ar_jctx *c, yajl_val o, struct ar_spec *s)
{
  if (ar_json_str (c, o, "ociVersion", true, &s->oci_version) < 0 || check_oci_version (c, s->oci_version) < 0
      || ar_json_object_alloc (c, o, "root", true, sizeof *s->root, parse_root, (void **) &s->root) < 0
      || ar_json_objarray (c, o, "mounts", false, sizeof *s->mounts, parse_mount, (void **) &s->mounts, &s->n_mounts) < 0
      || ar_json_object_alloc (c, o, "process", true, sizeof *s->process, ar_parse_process_obj, (void **) &s->process) < 0
      || ar_json_str (c, o, "hostname", false, &s->hostname) < 0
      || ar_json_str (c, o, "domainname", false, &s->domainname) < 0
      || ar_json_object (c, o, "hooks", false, parse_hooks, &s->hooks) < 0
      || ar_json_kv (c, o, "annotations", &s->annotations, &s->n_annotations) < 0
      || ar_json_object_alloc (c, o, "linux", false, sizeof *s->linux_, ar_parse_linux, (void **) &s->linux_) < 0)
    return -1;
  return ar_spec_validate (c, s);
}

int
ar_spec_parse (const char *buf, size_t len, const char *label, struct ar_spec **out, ar_error **err)
{
  struct ar_jctx c;
  yajl_val root;

  *out = NULL;
  label = label ? label : "config.json";
  if (ar_json_parse (buf, len, label, &root, err) < 0)
    return -1;
  ar_jctx_init (&c, label, err);
  struct ar_spec *s = xmalloc0 (sizeof *s);
  int r = parse_spec_obj (&c, root, s);
  ar_json_tree_free (root);
  if (r < 0)
    {
      ar_spec_free (s);
      return -1;
    }
  *out = s;
  return 0;
}

int
ar_process_parse (const char *buf, size_t len, const char *label, struct ar_process **out, ar_error **err)
{
  struct ar_jctx c;
  yajl_val root;

  *out = NULL;
  label = label ? label : "process.json";
  if (ar_json_parse (buf, len, label, &root, err) < 0)
    return -1;
  ar_jctx_init (&c, label, err);
  struct ar_process *p = xmalloc0 (sizeof *p);
  int r = parse_process (&c, root, p, false);
  if (r == 0)
    r = ar_process_validate (&c, p, "");
  ar_json_tree_free (root);
  if (r < 0)
    {
      ar_process_free (p);
      return -1;
    }
  *out = p;
  return 0;
}

/* A whole regular file (with fifo_ok, a pipe too: exec -p <(...) or
 * /dev/fd/N), bounded: a device as config.json would block or never end. */
static int
read_bounded (const char *path, bool fifo_ok, char **buf, size_t *len, ar_error **err)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return ar_err (err, errno, "open %s", path);
  return ar_read_regular (fd, path, AR_SPEC_MAX_FILE_SIZE, fifo_ok, buf, len, err);
}

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s && s[1] ? s + 1 : path;
}

int
ar_spec_load_file (const char *path, struct ar_spec **out, ar_error **err)
{
  cleanup_free char *buf = NULL;
  size_t len;
  *out = NULL;
  if (read_bounded (path, false, &buf, &len, err) < 0)
    return -1;
  return ar_spec_parse (buf, len, base_name (path), out, err);
}

int
ar_process_load_file (const char *path, struct ar_process **out, ar_error **err)
{
  cleanup_free char *buf = NULL;
  size_t len;
  *out = NULL;
  if (read_bounded (path, true, &buf, &len, err) < 0)
    return -1;
  return ar_process_parse (buf, len, base_name (path), out, err);
}
