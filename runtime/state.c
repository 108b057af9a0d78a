/* State folder, locking and state.json for one container. */
#include "config.h"
#include "clock.h"
#include "state.h"
#include "json.h"
#include "jsongen.h"
#include "spec.h"
#include "strio.h"
#include "util.h"
#include "cgroups.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <yajl/yajl_tree.h>

/* Create the state root (0700) when missing. */
static int
ar_root_ensure (const char *root, ar_error **err)
{
  cleanup_free char *copy = NULL;
  struct stat st;

  if (!root || !*root)
    return ar_err (err, 0, "no state root: XDG_RUNTIME_DIR is not set; pass --root or set it");
  if (stat (root, &st) == 0)
    {
      if (!S_ISDIR (st.st_mode))
        return ar_err (err, ENOTDIR, "state root %s", root);
      return 0;
    }
  /* mkdir -p, each level 0700: the root holds other users' nothing. */
  copy = xstrdup (root);
  for (char *p = copy + 1;; p++)
    {
      if (*p != '/' && *p != '\0')
        continue;
      char c = *p;
      *p = '\0';
      if (mkdir (copy, 0700) < 0 && errno != EEXIST)
        return ar_err (err, errno, "create state root %s", copy);
      *p = c;
      if (c == '\0')
        break;
    }
  return 0;
}

static int
lock_dir (int dirfd, bool exclusive, const char *id, ar_error **err)
{
  struct stat st;
  if (flock (dirfd, exclusive ? LOCK_EX : LOCK_SH) < 0)
    return ar_err (err, errno, "lock state of container \"%s\"", id);
  /* A delete that held the lock before us may have removed the folder. */
  if (fstat (dirfd, &st) < 0)
    return ar_err (err, errno, "stat state of container \"%s\"", id);
  if (st.st_nlink == 0)
    return ar_err (err, 0, "container \"%s\" does not exist", id);
  return 0;
}

int
ar_state_create (const char *root, const char *id, int *dirfd, ar_error **err)
{
  cleanup_close int rfd = -1;
  cleanup_close int fd = -1;

  if (ar_root_ensure (root, err) < 0)
    return -1;
  rfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rfd < 0)
    return ar_err (err, errno, "open state root %s", root);
  /* 0711: a container root in a user namespace must reach exec.fifo (which
   * is its own, 0600); listing and every other file stay private. */
  if (mkdirat (rfd, id, 0711) < 0)
    {
      if (errno == EEXIST)
        return ar_err (err, 0, "container \"%s\" already exists", id);
      return ar_err (err, errno, "create state folder %s/%s", root, id);
    }
  fd = openat (rfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return ar_err (err, errno, "open state folder %s/%s", root, id);
  if (fchmod (fd, 0711) < 0) /* past the umask */
    return ar_err (err, errno, "chmod state folder %s/%s", root, id);
  if (lock_dir (fd, true, id, err) < 0)
    return -1;
  *dirfd = ar_steal_fd (fd);
  return 0;
}

int
ar_state_open (const char *root, const char *id, bool exclusive, int *dirfd, ar_error **err)
{
  cleanup_free char *path = NULL;
  cleanup_close int fd = -1;

  if (!root || !*root)
    return ar_err (err, 0, "no state root: XDG_RUNTIME_DIR is not set; pass --root or set it");
  path = xasprintf ("%s/%s", root, id);
  fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return ar_err (err, 0, "container \"%s\" does not exist", id);
      return ar_err (err, errno, "open state folder %s", path);
    }
  if (lock_dir (fd, exclusive, id, err) < 0)
    return -1;
  *dirfd = ar_steal_fd (fd);
  return 0;
}

int
ar_state_remove (const char *root, const char *id, ar_error **err)
{
  cleanup_free char *path = xasprintf ("%s/%s", root, id);
  cleanup_close int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  DIR *d;
  struct dirent *de;

  if (fd < 0)
    return errno == ENOENT ? 0 : ar_err (err, errno, "open state folder %s", path);
  d = fdopendir (fd);
  if (!d)
    return ar_err (err, errno, "read state folder %s", path);
  fd = -1;
  while ((de = readdir (d)))
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (unlinkat (dirfd (d), de->d_name, 0) < 0 && errno != ENOENT)
        {
          int e = errno;
          closedir (d);
          return ar_err (err, e, "remove %s/%s", path, de->d_name);
        }
    }
  closedir (d);
  if (rmdir (path) < 0 && errno != ENOENT)
    return ar_err (err, errno, "remove state folder %s", path);
  return 0;
}

static void
gen_kv (struct ar_gen *g, const char *k, const char *v)
{
  ar_gen_str (g, k);
  ar_gen_str (g, v ? v : "");
}

static void
gen_annotations (struct ar_gen *g, const struct ar_cstate *st)
{
  ar_gen_str (g, "annotations");
  ar_gen_map_open (g);
  for (size_t i = 0; i < st->n_annotations; i++)
    gen_kv (g, st->annotations[i].key, st->annotations[i].value);
  ar_gen_map_close (g);
}

static char *
internal_json (const struct ar_cstate *st)
{
  struct ar_gen G, *g = &G;
  ar_gen_init (g, NULL);
  ar_gen_map_open (g);
  gen_kv (g, "id", st->id);
  ar_gen_str (g, "pid");
  ar_gen_int (g, st->pid);
  ar_gen_str (g, "pidStartTime");
  ar_gen_int (g, (long long) st->pid_start);
  gen_kv (g, "bundle", st->bundle);
  gen_kv (g, "rootfs", st->rootfs);
  gen_kv (g, "created", st->created);
  gen_kv (g, "owner", st->owner);
  if (st->cgroup_path)
    gen_kv (g, "cgroupPath", st->cgroup_path);
  if (st->systemd_unit)
    gen_kv (g, "systemdUnit", st->systemd_unit);
  gen_kv (g, "config", st->config_path);
  gen_annotations (g, st);
  ar_gen_map_close (g);
  return ar_gen_text (g, "state");
}

int
ar_cstate_write (int dirfd, const struct ar_cstate *st, ar_error **err)
{
  cleanup_free char *json = internal_json (st);
  size_t len = strlen (json);
  cleanup_close int fd = openat (dirfd, AR_STATE_FILE ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                                 0600);

  if (fd < 0)
    return ar_err (err, errno, "write state of \"%s\": open " AR_STATE_FILE ".tmp", st->id);
  for (size_t off = 0; off < len;)
    {
      ssize_t n = write (fd, json + off, len - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return ar_err (err, errno, "write state of \"%s\"", st->id);
      off += (size_t) n;
    }
  /* No fsync: the state root is a tmpfs (/run) in every real setup, and the
   * state describes processes that a crash or reboot ends anyway; what
   * matters is that no reader sees a torn file, which the rename below
   * gives (a reader sees the old file or the whole new one). runc does not
   * sync either; the fsync cost a few ms per write on a disk-backed --root. */
  if (renameat (dirfd, AR_STATE_FILE ".tmp", dirfd, AR_STATE_FILE) < 0)
    return ar_err (err, errno, "write state of \"%s\": rename", st->id);
  return 0;
}

static long long
get_int (yajl_val root, const char *key)
{
  const char *p[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, p, yajl_t_number);
  return v && YAJL_IS_INTEGER (v) ? YAJL_GET_INTEGER (v) : -1;
}

int
ar_cstate_read (int dirfd, struct ar_cstate *st, ar_error **err)
{
  cleanup_free char *buf = NULL;
  size_t len;
  struct ar_state s;
  yajl_val root;

  memset (st, 0, sizeof *st);
  cleanup_close int fd = openat (dirfd, AR_STATE_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return errno == ENOENT ? 0 : ar_err (err, errno, "open state file " AR_STATE_FILE);
  if (ar_read_regular (fd, AR_STATE_FILE, AR_SPEC_MAX_FILE_SIZE, false, &buf, &len, err) < 0
      || ar_state_parse_tree (buf, len, AR_STATE_FILE, &s, &root, err) < 0)
    return -1;
  st->id = ar_steal_ptr (s.id);
  st->pid = s.pid;
  st->bundle = ar_steal_ptr (s.bundle);
  st->annotations = ar_steal_ptr (s.annotations);
  st->n_annotations = s.n_annotations;
  s.n_annotations = 0;
  ar_state_clear (&s);
  long long start = get_int (root, "pidStartTime");
  st->pid_start = start > 0 ? (unsigned long long) start : 0;
  st->rootfs = ar_state_str (root, "rootfs");
  st->created = ar_state_str (root, "created");
  st->owner = ar_state_str (root, "owner");
  st->cgroup_path = ar_state_str (root, "cgroupPath");
  st->systemd_unit = ar_state_str (root, "systemdUnit");
  st->config_path = ar_state_str (root, "config");
  ar_json_tree_free (root);
  if (st->pid <= 0)
    {
      ar_cstate_clear (st);
      return ar_err (err, 0, AR_STATE_FILE ": pid missing");
    }
  return 1;
}

void
ar_cstate_clear (struct ar_cstate *st)
{
  free (st->id);
  free (st->bundle);
  free (st->rootfs);
  free (st->created);
  free (st->owner);
  free (st->cgroup_path);
  free (st->systemd_unit);
  free (st->config_path);
  ar_kv_free (st->annotations, st->n_annotations);
  memset (st, 0, sizeof *st);
}

/* Field 22 of /proc/PID/stat; fields are counted after the last ')' since
 * the command name may hold spaces and parentheses. */
static int
proc_stat_fields (pid_t pid, pid_t *ppid, unsigned long long *start)
{
  char path[64], buf[1024];
  ssize_t n;
  int fd;

  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  char *p = strrchr (buf, ')');
  if (!p)
    return -1;
  p += 2; /* field 3: state */
  char state;
  int pp;
  unsigned long long st;
  if (sscanf (p, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &state, &pp, &st) != 3)
    return -1;
  if (state == 'Z' || state == 'X')
    return -1;
  if (ppid)
    *ppid = pp;
  if (start)
    *start = st;
  return 0;
}

unsigned long long
ar_proc_start_time (pid_t pid)
{
  unsigned long long st = 0;
  if (proc_stat_fields (pid, NULL, &st) < 0)
    return 0;
  return st;
}

pid_t
ar_proc_ppid (pid_t pid)
{
  pid_t pp = 0;
  if (proc_stat_fields (pid, &pp, NULL) < 0)
    return 0;
  return pp;
}

bool
ar_cstate_alive (const struct ar_cstate *st)
{
  if (st->pid <= 0)
    return false;
  unsigned long long now = ar_proc_start_time (st->pid);
  return now != 0 && now == st->pid_start;
}

int
ar_cstate_pidfd (const struct ar_cstate *st)
{
  int fd = (int) syscall (SYS_pidfd_open, st->pid, 0);
  if (fd < 0)
    return -1;
  /* Checked after opening: the pidfd pins the process we verified. */
  if (!ar_cstate_alive (st))
    {
      close (fd);
      errno = ESRCH;
      return -1;
    }
  return fd;
}

const char *
ar_cstate_status (int dirfd, const struct ar_cstate *st)
{
  struct stat sb;
  if (!st->id)
    return "creating";
  if (!ar_cstate_alive (st))
    return "stopped";
  if (fstatat (dirfd, AR_STATE_FIFO, &sb, AT_SYMLINK_NOFOLLOW) == 0)
    return "created";
  if (st->cgroup_path && ar_cgroup_is_frozen (st->cgroup_path))
    return "paused";
  return "running";
}

char *
ar_cstate_to_json (const struct ar_cstate *st, const char *status, bool pretty)
{
  struct ar_gen G, *g = &G;
  ar_gen_init (g, pretty ? "  " : NULL);
  bool alive = strcmp (status, "stopped") != 0;
  ar_gen_map_open (g);
  gen_kv (g, "ociVersion", AR_SPEC_VERSION);
  gen_kv (g, "id", st->id);
  ar_gen_str (g, "pid");
  ar_gen_int (g, alive ? st->pid : 0);
  gen_kv (g, "status", status);
  gen_kv (g, "bundle", st->bundle);
  gen_kv (g, "rootfs", st->rootfs);
  gen_kv (g, "created", st->created);
  gen_kv (g, "owner", st->owner);
  gen_annotations (g, st);
  ar_gen_map_close (g);
  return ar_gen_text (g, "state");
}

char *
ar_cstate_hook_json (const struct ar_cstate *st, const char *id, const char *status)
{
  struct ar_state s = {
    .oci_version = (char *) AR_SPEC_VERSION,
    .id = (char *) id,
    .status = (char *) status,
    .pid = st->pid,
    .bundle = st->bundle,
    .annotations = st->annotations,
    .n_annotations = st->n_annotations,
  };
  return ar_state_to_json (&s);
}

char *
ar_rfc3339_now (void)
{
  char buf[AR_RFC3339_LEN];
  ar_rfc3339_now_buf (9, buf);
  return xstrdup (buf);
}
