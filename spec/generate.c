/* The default config.json (see generate.h): the same confinement runc's
 * `runc spec` writes, so that either runtime runs it. */
#include "config.h"
#include "generate.h"
#include "model.h"
#include "util.h"

#include <fcntl.h>

static const char *const ar_default_caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };

const char *const ar_default_masked_paths[] = {
  "/proc/acpi",
  "/proc/asound",
  "/proc/kcore",
  "/proc/keys",
  "/proc/latency_stats",
  "/proc/timer_list",
  "/proc/timer_stats",
  "/proc/sched_debug",
  "/sys/firmware",
  "/proc/scsi",
  NULL,
};

const char *const ar_default_readonly_paths[] = {
  "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

static void
ar_gen_default_process (struct ar_gen *g, const struct ar_gen_opts *o)
{
  static const char *const args[] = { "sh", NULL };
  static const char *const env[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm",
                                     NULL };
  (void) o;
  ar_gen_str (g, "process");
  ar_gen_map_open (g);
  ar_gen_key_bool (g, "terminal", true);
  ar_gen_str (g, "user");
  ar_gen_map_open (g);
  ar_gen_key_int (g, "uid", 0);
  ar_gen_key_int (g, "gid", 0);
  ar_gen_map_close (g);
  ar_gen_key_strv (g, "args", args);
  ar_gen_key_strv (g, "env", env);
  ar_gen_key_str (g, "cwd", "/");
  /* No inheritable set: non-empty inheritable capabilities leak into
   * executables with file capabilities (CVE-2022-29162), as runc decided. */
  ar_gen_str (g, "capabilities");
  ar_gen_map_open (g);
  ar_gen_key_strv (g, "bounding", ar_default_caps);
  ar_gen_key_strv (g, "effective", ar_default_caps);
  ar_gen_key_strv (g, "permitted", ar_default_caps);
  ar_gen_key_strv (g, "ambient", ar_default_caps);
  ar_gen_map_close (g);
  ar_gen_str (g, "rlimits");
  ar_gen_array_open (g);
  ar_gen_map_open (g);
  ar_gen_key_str (g, "type", "RLIMIT_NOFILE");
  ar_gen_key_int (g, "hard", 1024);
  ar_gen_key_int (g, "soft", 1024);
  ar_gen_map_close (g);
  ar_gen_array_close (g);
  ar_gen_key_bool (g, "noNewPrivileges", true);
  ar_gen_map_close (g);
}

static void
gen_mount (struct ar_gen *g, const char *dest, const char *type, const char *source, const char *const *options)
{
  ar_gen_map_open (g);
  ar_gen_key_str (g, "destination", dest);
  ar_gen_key_str (g, "type", type);
  ar_gen_key_str (g, "source", source);
  if (options)
    ar_gen_key_strv (g, "options", options);
  ar_gen_map_close (g);
}

static void
ar_gen_default_mounts (struct ar_gen *g, const struct ar_gen_opts *o)
{
  static const char *const dev[] = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
  /* gid=5 (tty) only exists when the container's ids include it. */
  static const char *const pts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL };
  static const char *const pts_rootless[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL };
  static const char *const shm[] = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
  static const char *const mq[] = { "nosuid", "noexec", "nodev", NULL };
  static const char *const sys[] = { "nosuid", "noexec", "nodev", "ro", NULL };
  /* A user namespace that does not own the network namespace cannot mount sysfs. */
  static const char *const sys_rootless[] = { "rbind", "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const cg[] = { "nosuid", "noexec", "nodev", "relatime", "ro", NULL };

  ar_gen_str (g, "mounts");
  ar_gen_array_open (g);
  gen_mount (g, "/proc", "proc", "proc", NULL);
  gen_mount (g, "/dev", "tmpfs", "tmpfs", dev);
  gen_mount (g, "/dev/pts", "devpts", "devpts", o->rootless ? pts_rootless : pts);
  gen_mount (g, "/dev/shm", "tmpfs", "shm", shm);
  gen_mount (g, "/dev/mqueue", "mqueue", "mqueue", mq);
  if (o->rootless)
    gen_mount (g, "/sys", "none", "/sys", sys_rootless);
  else
    gen_mount (g, "/sys", "sysfs", "sysfs", sys);
  gen_mount (g, "/sys/fs/cgroup", "cgroup", "cgroup", cg);
  ar_gen_array_close (g);
}

static void
gen_idmap (struct ar_gen *g, const char *key, uint32_t host)
{
  ar_gen_str (g, key);
  ar_gen_array_open (g);
  ar_gen_map_open (g);
  ar_gen_key_int (g, "containerID", 0);
  ar_gen_key_int (g, "hostID", host);
  ar_gen_key_int (g, "size", 1);
  ar_gen_map_close (g);
  ar_gen_array_close (g);
}

static void
ar_gen_default_linux (struct ar_gen *g, const struct ar_gen_opts *o)
{
  ar_gen_str (g, "linux");
  ar_gen_map_open (g);
  if (o->rootless)
    {
      gen_idmap (g, "uidMappings", o->host_uid);
      gen_idmap (g, "gidMappings", o->host_gid);
    }
  else
    {
      /* Deny every device by default; the runtime adds the standard ones. */
      ar_gen_str (g, "resources");
      ar_gen_map_open (g);
      ar_gen_str (g, "devices");
      ar_gen_array_open (g);
      ar_gen_map_open (g);
      ar_gen_key_bool (g, "allow", false);
      ar_gen_key_str (g, "access", "rwm");
      ar_gen_map_close (g);
      ar_gen_array_close (g);
      ar_gen_map_close (g);
    }
  ar_gen_str (g, "namespaces");
  ar_gen_array_open (g);
  /* Rootless: no network namespace, the container shares the host's network,
   * as runc does (a new one would have no connectivity without a helper). */
  static const char *const ns[] = { "pid", "network", "ipc", "uts", "mount", NULL };
  static const char *const ns_rootless[] = { "pid", "ipc", "uts", "mount", "user", NULL };
  for (const char *const *t = o->rootless ? ns_rootless : ns; *t; t++)
    {
      ar_gen_map_open (g);
      ar_gen_key_str (g, "type", *t);
      ar_gen_map_close (g);
    }
  ar_gen_array_close (g);
  ar_gen_key_strv (g, "maskedPaths", ar_default_masked_paths);
  ar_gen_key_strv (g, "readonlyPaths", ar_default_readonly_paths);
  ar_gen_map_close (g);
}

int
ar_generate_default (const struct ar_gen_opts *o, char **out, ar_error **err)
{
  struct ar_gen G, *g = &G;
  ar_gen_init (g, "\t");
  ar_gen_map_open (g);
  ar_gen_key_str (g, "ociVersion", AR_SPEC_VERSION);
  ar_gen_default_process (g, o);
  ar_gen_str (g, "root");
  ar_gen_map_open (g);
  ar_gen_key_str (g, "path", "rootfs");
  ar_gen_key_bool (g, "readonly", true);
  ar_gen_map_close (g);
  ar_gen_key_str (g, "hostname", o->hostname ? o->hostname : "agentrun");
  ar_gen_default_mounts (g, o);
  ar_gen_default_linux (g, o);
  ar_gen_map_close (g);
  return ar_gen_done (g, "config.json", out, NULL, err);
}

int
ar_write_new_config (const char *bundle, const char *text, ar_error **err)
{
  cleanup_close int dfd = open (bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return ar_err (err, errno, "open bundle %s", bundle);
  /* O_EXCL also refuses a dangling symlink planted at config.json. */
  cleanup_close int fd = openat (dfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST)
    return ar_err (err, 0, "%s/config.json already exists: not overwriting it", bundle);
  if (fd < 0)
    return ar_err (err, errno, "create %s/config.json", bundle);
  size_t len = strlen (text), off = 0;
  while (off < len)
    {
      ssize_t w = write (fd, text + off, len - off);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        {
          int saved = errno;
          unlinkat (dfd, "config.json", 0);
          return ar_err (err, saved, "write %s/config.json", bundle);
        }
      off += (size_t) w;
    }
  int fdc = ar_steal_fd (fd);
  if (close (fdc) < 0)
    return ar_err (err, errno, "close %s/config.json", bundle);
  return 0;
}
