/* Landlock rulesets from the run.agentrun.landlock annotation (landlock.h).
 * Raw syscalls: the constants the build host's headers may lack (newer ABI
 * rights, the net and scope fields) are defined here, and the ruleset
 * attribute is passed with the size the running kernel understands. */
#include "config.h"
#include "landlock.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* Rights by ABI version (Documentation/userspace-api/landlock.rst). */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1) /* ABI 6 */

#define LL_FS_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_FS_V1 ((LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1)
/* What may be granted on a path that is not a folder. */
#define LL_FS_FILE                                                                                                     \
  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | LL_FS_TRUNCATE          \
   | LL_FS_IOCTL_DEV)

/* The full attribute of ABI 6; older kernels accept it when the fields
 * they do not know are zero. */
struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

int
ar_landlock_abi (ar_error **err)
{
  long v = syscall (SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (v < 0)
    return ar_err (err, errno, "landlock: the kernel does not offer Landlock (landlock_create_ruleset)%s",
                   errno == EOPNOTSUPP ? ", it is built in but not enabled (lsm= boot parameter)" : "");
  return (int) v;
}

static uint64_t
handled_fs (int abi)
{
  uint64_t m = LL_FS_V1;
  if (abi >= 2)
    m |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3)
    m |= LL_FS_TRUNCATE;
  if (abi >= 5)
    m |= LL_FS_IOCTL_DEV;
  return m;
}

static const char *
annotation (const struct ar_kv *kv, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (kv[i].key, AR_LANDLOCK_ANNOTATION) == 0)
      return kv[i].value;
  return NULL;
}

/* One rule: everything of `access` beneath the path (an O_PATH fd, opened
 * inside the container's root, so symlinks resolve as the agent sees them). */
static int
add_path (int ruleset, const char *key, size_t idx, const char *path, uint64_t access, ar_error **err)
{
  if (path[0] != '/')
    return ar_err (err, 0, "annotation " AR_LANDLOCK_ANNOTATION ": $.%s[%zu]: \"%s\" is not an absolute path", key, idx,
                   path);
  cleanup_close int fd = open (path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return ar_err (err, errno, "annotation " AR_LANDLOCK_ANNOTATION ": $.%s[%zu]: %s", key, idx, path);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return ar_err (err, errno, "landlock: stat %s", path);
  if (!S_ISDIR (st.st_mode))
    access &= LL_FS_FILE;
  struct landlock_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };
  if (syscall (SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
    return ar_err (err, errno, "landlock: add the %s rule for %s", key, path);
  return 0;
}

static int
add_list (int ruleset, yajl_val root, const char *key, uint64_t access, ar_error **err)
{
  const char *p[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, p, yajl_t_any);
  if (!v)
    return 0;
  if (!YAJL_IS_ARRAY (v))
    return ar_err (err, 0, "annotation " AR_LANDLOCK_ANNOTATION ": $.%s: not an array of paths", key);
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      yajl_val s = v->u.array.values[i];
      if (!YAJL_IS_STRING (s))
        return ar_err (err, 0, "annotation " AR_LANDLOCK_ANNOTATION ": $.%s[%zu]: not a string", key, i);
      if (add_path (ruleset, key, i, s->u.string, access, err) < 0)
        return -1;
    }
  return 0;
}

static int
parse_scope (yajl_val root, int abi, uint64_t *scoped, ar_error **err)
{
  const char *p[] = { "scope", NULL };
  yajl_val v = yajl_tree_get (root, p, yajl_t_any);
  *scoped = 0;
  if (!v)
    return 0;
  if (!YAJL_IS_ARRAY (v))
    return ar_err (err, 0, "annotation " AR_LANDLOCK_ANNOTATION ": $.scope: not an array");
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      const char *s = YAJL_GET_STRING (v->u.array.values[i]);
      if (s && strcmp (s, "abstract-unix-socket") == 0)
        *scoped |= LL_SCOPE_ABSTRACT_UNIX;
      else if (s && strcmp (s, "signal") == 0)
        *scoped |= LL_SCOPE_SIGNAL;
      else
        return ar_err (err, 0,
                       "annotation " AR_LANDLOCK_ANNOTATION ": $.scope[%zu]: unknown scope (known: "
                       "abstract-unix-socket, signal)",
                       i);
    }
  if (*scoped && abi < 6)
    return ar_err (err, EOPNOTSUPP,
                   "annotation " AR_LANDLOCK_ANNOTATION ": $.scope needs Landlock ABI 6, the "
                   "kernel has %d",
                   abi);
  return 0;
}

/* A misspelt key would silently drop a list: refuse it. */
static int
check_keys (yajl_val root, ar_error **err)
{
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      if (strcmp (k, "read") && strcmp (k, "write") && strcmp (k, "scope"))
        return ar_err (err, 0,
                       "annotation " AR_LANDLOCK_ANNOTATION ": $.%s: unknown key (known: read, write, "
                       "scope)",
                       k);
    }
  return 0;
}

static int
build (yajl_val root, int abi, ar_error **err)
{
  uint64_t fs = handled_fs (abi);
  struct ll_ruleset_attr attr = { .handled_access_fs = fs };
  if (check_keys (root, err) < 0 || parse_scope (root, abi, &attr.scoped, err) < 0)
    return -1;
  /* An ABI 1-5 kernel knows only the first one or two fields. */
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof (uint64_t) : sizeof (uint64_t);
  /* close-on-exec as the kernel makes it */
  int rs = (int) syscall (SYS_landlock_create_ruleset, &attr, size, 0);
  if (rs < 0)
    return ar_err (err, errno, "landlock: create the ruleset (ABI %d)", abi);
  if (add_list (rs, root, "read", LL_FS_READ, err) < 0 || add_list (rs, root, "write", fs, err) < 0)
    {
      close (rs);
      return -1;
    }
  return rs;
}

int
ar_landlock_prepare (const struct ar_kv *annotations, size_t n, int *fd, ar_error **err)
{
  const char *text = annotation (annotations, n);
  *fd = -1;
  if (!text)
    return 0;
  char ebuf[256] = "";
  yajl_val root = ar_json_tree (text, strlen (text), ebuf, sizeof ebuf);
  if (!root || !YAJL_IS_OBJECT (root))
    {
      ar_json_tree_free (root);
      return ar_err (err, 0, "annotation " AR_LANDLOCK_ANNOTATION ": $: not a JSON object%s%s", *ebuf ? ": " : "", ebuf);
    }
  int abi = ar_landlock_abi (err);
  if (abi >= 0)
    *fd = build (root, abi, err);
  ar_json_tree_free (root);
  return *fd < 0 ? -1 : 0;
}

int
ar_landlock_restrict (int fd, bool no_new_privs, ar_error **err)
{
  if (fd < 0)
    return 0;
  /* landlock_restrict_self wants no_new_privs unless we hold CAP_SYS_ADMIN;
   * set it now when the process will have it anyway. */
  int r = -1;
  if (no_new_privs && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    ar_err (err, errno, "landlock: prctl PR_SET_NO_NEW_PRIVS");
  else if (syscall (SYS_landlock_restrict_self, fd, 0) < 0)
    ar_err (err, errno, "landlock: restrict the container process (landlock_restrict_self)");
  else
    r = 0;
  close (fd);
  return r;
}

int
ar_landlock_apply_kv (const struct ar_kv *annotations, size_t n, bool no_new_privs, ar_error **err)
{
  int fd;
  if (ar_landlock_prepare (annotations, n, &fd, err) < 0)
    return -1;
  return ar_landlock_restrict (fd, no_new_privs, err);
}
