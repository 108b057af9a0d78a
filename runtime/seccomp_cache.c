/* The compiled-filter cache. Compiling a long allowlist with libseccomp costs
 * milliseconds per container; the same profile compiled by the same libseccomp
 * for the same architecture and kernel API level gives the same BPF, so it is
 * kept under the state root, keyed by SHA-256 of a canonical serialisation.
 * An entry is trusted only when it is a regular file owned by us, not group- or
 * world-writable, of the exact size its header announces, carrying its own key
 * and the SHA-256 of its instructions. Anything else is a miss. */
#include "config.h"
#include "seccomp_cache.h"
#include "sha256.h"
#include "strio.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- canonical serialisation of a profile ---- */

struct buf {
  unsigned char *p;
  size_t len, cap;
};

static void
put (struct buf *b, const void *data, size_t n)
{
  if (b->len + n > b->cap)
    {
      b->cap = (b->len + n) * 2 + 256;
      b->p = xrealloc (b->p, b->cap);
    }
  memcpy (b->p + b->len, data, n);
  b->len += n;
}

static void
put_u64 (struct buf *b, uint64_t v)
{
  put (b, &v, sizeof v);
}

/* Length-prefixed, with a distinct marker for NULL. */
static void
put_str (struct buf *b, const char *s)
{
  put_u64 (b, s ? strlen (s) : UINT64_MAX);
  if (s)
    put (b, s, strlen (s));
}

static void
put_strv (struct buf *b, char *const *v, size_t n)
{
  size_t i;
  put_u64 (b, n);
  for (i = 0; i < n; i++)
    put_str (b, v[i]);
}

/* What else the BPF depends on: the libseccomp that compiles it, the
 * kernel's API level, the architecture. */
static void
put_header (struct buf *b)
{
  const struct scmp_version *v = seccomp_version ();
  put_str (b, "agentrun seccomp cache v2");
  put_u64 (b, ((uint64_t) v->major << 32) | ((uint64_t) v->minor << 16) | v->micro);
  put_u64 (b, seccomp_api_get ());
  put_u64 (b, seccomp_arch_native ());
}

void
ar_seccomp_cache_key_named (const char *name, unsigned char key[AR_SHA256_LEN])
{
  struct buf b = { 0 };
  put_header (&b);
  /* no profile's first field (a string's length) is UINT64_MAX - 1 */
  put_u64 (&b, UINT64_MAX - 1);
  put_str (&b, name);
  ar_sha256 (b.p, b.len, key);
  free (b.p);
}

void
ar_seccomp_cache_key (const struct ar_seccomp *sc, unsigned char key[AR_SHA256_LEN])
{
  struct buf b = { 0 };
  size_t i, j;

  put_header (&b);
  put_str (&b, sc->default_action);
  put_u64 (&b, sc->has_default_errno_ret ? sc->default_errno_ret : UINT64_MAX);
  put_strv (&b, sc->architectures, sc->n_architectures);
  put_strv (&b, sc->flags, sc->n_flags);
  put_u64 (&b, sc->n_syscalls);
  for (i = 0; i < sc->n_syscalls; i++)
    {
      const struct ar_seccomp_rule *r = &sc->syscalls[i];
      put_strv (&b, r->names, r->n_names);
      put_str (&b, r->action);
      put_u64 (&b, r->has_errno_ret ? r->errno_ret : UINT64_MAX);
      put_u64 (&b, r->n_args);
      for (j = 0; j < r->n_args; j++)
        {
          put_u64 (&b, r->args[j].index);
          put_u64 (&b, r->args[j].value);
          put_u64 (&b, r->args[j].value_two);
          put_u64 (&b, (uint64_t) r->args[j].op);
        }
    }
  ar_sha256 (b.p, b.len, key);
  free (b.p);
}

/* ---- entries on disk ---- */

#define CACHE_DIR ".seccomp-cache"
#define MAGIC "ARSCBPF1"

struct entry_header {
  char magic[8];
  uint32_t n_insns;
  uint32_t reserved;
  unsigned char key[AR_SHA256_LEN];
  unsigned char body_sha[AR_SHA256_LEN];
};

static void
entry_name (const unsigned char key[AR_SHA256_LEN], char name[AR_SHA256_LEN * 2 + 8])
{
  ar_hex (key, AR_SHA256_LEN, name);
  strcpy (name + 2 * AR_SHA256_LEN, ".bpf");
}

/* The cache directory, created if needed; it must be ours and private. */
static int
open_cache_dir (const char *state_root, bool create)
{
  cleanup_close int root = open (state_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  int fd;

  if (root < 0)
    return -1;
  if (create && mkdirat (root, CACHE_DIR, 0700) < 0 && errno != EEXIST)
    return -1;
  fd = openat (root, CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0 || st.st_uid != geteuid () || (st.st_mode & 022))
    {
      ar_debug ("seccomp cache: %s/" CACHE_DIR " is not private to us, not used", state_root);
      close (fd);
      errno = EPERM;
      return -1;
    }
  return fd;
}

static int
read_entry (int fd, const unsigned char key[AR_SHA256_LEN], struct ar_seccomp_prog **out)
{
  struct entry_header h;
  unsigned char sha[AR_SHA256_LEN];
  struct ar_seccomp_prog *prog;
  struct stat st;
  size_t body;

  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & 022))
    return -1;
  if (pread (fd, &h, sizeof h, 0) != (ssize_t) sizeof h || memcmp (h.magic, MAGIC, 8) != 0
      || memcmp (h.key, key, AR_SHA256_LEN) != 0 || h.n_insns == 0 || h.n_insns > BPF_MAXINSNS)
    return -1;
  body = (size_t) h.n_insns * sizeof (struct sock_filter);
  if ((size_t) st.st_size != sizeof h + body)
    return -1;
  prog = xmalloc0 (sizeof *prog);
  prog->insns = xmalloc0 (body);
  prog->len = h.n_insns;
  prog->from_cache = true;
  if (pread (fd, prog->insns, body, sizeof h) != (ssize_t) body
      || (ar_sha256 (prog->insns, body, sha), memcmp (sha, h.body_sha, AR_SHA256_LEN) != 0))
    {
      ar_seccomp_prog_free (prog);
      return -1;
    }
  *out = prog;
  return 0;
}

int
ar_seccomp_cache_load (const char *state_root, const unsigned char key[AR_SHA256_LEN], struct ar_seccomp_prog **out)
{
  cleanup_close int dir = open_cache_dir (state_root, false);
  cleanup_close int fd = -1;
  char name[AR_SHA256_LEN * 2 + 8];

  if (dir < 0)
    return -1;
  entry_name (key, name);
  fd = openat (dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (read_entry (fd, key, out) < 0)
    {
      ar_debug ("seccomp cache: entry %s is not valid, recompiling", name);
      return -1;
    }
  return 0;
}

void
ar_seccomp_cache_store (const char *state_root, const unsigned char key[AR_SHA256_LEN], const struct ar_seccomp_prog *prog)
{
  cleanup_close int dir = open_cache_dir (state_root, true);
  cleanup_close int fd = -1;
  struct entry_header h = { .n_insns = (uint32_t) prog->len };
  size_t body = prog->len * sizeof (struct sock_filter);
  char name[AR_SHA256_LEN * 2 + 8], tmp[64];

  if (dir < 0)
    {
      ar_debug ("seccomp cache: cannot open %s/" CACHE_DIR ": %s", state_root, strerror (errno));
      return;
    }
  memcpy (h.magic, MAGIC, 8);
  memcpy (h.key, key, AR_SHA256_LEN);
  ar_sha256 (prog->insns, body, h.body_sha);
  entry_name (key, name);
  snprintf (tmp, sizeof tmp, ".tmp.%d.%lx", (int) getpid (), (unsigned long) prog);
  fd = openat (dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      ar_debug ("seccomp cache: create %s: %s", tmp, strerror (errno));
      return;
    }
  if (ar_write_all (fd, &h, sizeof h) < 0 || ar_write_all (fd, prog->insns, body) < 0
      || renameat (dir, tmp, dir, name) < 0)
    {
      ar_debug ("seccomp cache: writing %s: %s", name, strerror (errno));
      unlinkat (dir, tmp, 0);
    }
}
