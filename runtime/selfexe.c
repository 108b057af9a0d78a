/* Re-exec from a sealed memfd copy of /proc/self/exe. */
#include "config.h"
#include "selfexe.h"
#include "strio.h"
#include "util.h"

#include <fcntl.h>
#include <stdbool.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
#define SEALED_FROM_ENV "AGENTRUN_SEALED_FROM"

static bool
already_sealed (void)
{
  cleanup_close int fd = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  int seals = fcntl (fd, F_GET_SEALS);
  return seals >= 0 && (seals & SEALS) == SEALS;
}

/* The command line again, from /proc/self/cmdline (callers only see their
 * own slice of argv). */
static char **
own_argv (ar_error **err)
{
  cleanup_close int fd = open ("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  size_t len = 0;
  char *buf;

  if (fd < 0)
    return ar_err (err, errno, "open /proc/self/cmdline"), NULL;
  /* The kernel caps argv+envp at a quarter of the stack limit: 64 MiB is plenty. */
  if (ar_read_all (fd, 64 << 20, &buf, &len) < 0)
    return ar_err (err, errno, "read /proc/self/cmdline"), NULL;
  size_t argc = 0;
  for (size_t i = 0; i < len; i++)
    if (buf[i] == '\0')
      argc++;
  char **argv = xmalloc0 ((argc + 1) * sizeof *argv);
  for (size_t i = 0, a = 0; a < argc; a++)
    {
      argv[a] = buf + i;
      i += strlen (buf + i) + 1;
    }
  return argv; /* buf lives as long as argv[0]: until exec */
}

int
ar_selfexe_ensure_sealed (ar_error **err)
{
  char **argv;
  extern char **environ;
  cleanup_close int self = -1;
  cleanup_close int mfd = -1;
  struct stat st;

  if (already_sealed ())
    return 0;
  self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (self < 0)
    return ar_err (err, errno, "open /proc/self/exe");
  if (fstat (self, &st) < 0)
    return ar_err (err, errno, "stat /proc/self/exe");
  mfd = memfd_create ("agentrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (mfd < 0)
    return ar_err (err, errno, "memfd_create");
  for (off_t left = st.st_size; left > 0;)
    {
      ssize_t n = sendfile (mfd, self, NULL, (size_t) left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return ar_err (err, n < 0 ? errno : EIO, "copy /proc/self/exe into a memfd");
      left -= n;
    }
  /* EBUSY: the kernel found a page of the copy still referenced (a per-CPU
   * batch of new pages not yet drained, under load) and gave up waiting; it
   * goes by itself, so the seal is asked for again, for 0.2 s at most */
  int r, tries = 0;
  while ((r = fcntl (mfd, F_ADD_SEALS, SEALS)) < 0 && errno == EBUSY && tries++ < 100)
    usleep (2000);
  if (r < 0)
    return ar_err (err, errno, "seal the memfd copy of agentrun");
  argv = own_argv (err);
  if (!argv)
    return -1;
  /* where we came from, for ar_selfexe_path once /proc/self/exe is the copy */
  char *from = realpath ("/proc/self/exe", NULL);
  if (from && setenv (SEALED_FROM_ENV, from, 1) < 0)
    {
      free (from);
      return ar_err (err, errno, "setenv %s", SEALED_FROM_ENV);
    }
  free (from);
  /* MFD_CLOEXEC: execveat of a close-on-exec fd works (the kernel keeps the
   * file), and the copy is not an fd in the new image. */
  syscall (SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
  int e = errno;
  free (argv[0]);
  free (argv);
  return ar_err (err, e, "re-exec agentrun from its sealed copy");
}

/* Could a process running as uid, with no capability over the file,
 * open the binary behind /proc/self/exe for writing? Permission bits only
 * say no when the file is not ours to judge otherwise: owned by another
 * uid, not writable by group (whatever groups the process keeps) or
 * others, and no ACL (which could grant more than the bits show). When in
 * doubt (stat fails, an ACL we do not read), the answer is yes. */
static bool
exe_writable_by (uid_t uid)
{
  cleanup_close int fd = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return true;
  if (st.st_uid == uid || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return true;
  if (fgetxattr (fd, "system.posix_acl_access", NULL, 0) >= 0)
    return true;
  return errno != ENODATA && errno != EOPNOTSUPP;
}

int
ar_selfexe_seal_unless_unwritable (uid_t uid, ar_error **err)
{
  if (!exe_writable_by (uid))
    return 0;
  return ar_selfexe_ensure_sealed (err);
}

bool
ar_selfexe_safe_for (uid_t uid)
{
  return !exe_writable_by (uid) || already_sealed ();
}

char *
ar_selfexe_path (void)
{
  /* Only believed when running from a sealed copy, which only whoever
   * started us could have arranged: it says no more than PATH would. */
  const char *from = getenv (SEALED_FROM_ENV);
  if (from && from[0] == '/' && already_sealed ())
    return xstrdup (from);
  return realpath ("/proc/self/exe", NULL);
}
