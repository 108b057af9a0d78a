/* linux.seccomp: compile the profile with libseccomp into a classic BPF
 * program early (errors still reach the caller), and load it with seccomp(2)
 * directly as the last step before execve, so loading allocates nothing and
 * the runtime's own setup is never filtered. */
#include "config.h"
#include "seccomp.h"
#include "seccomp_cache.h"
#include "log.h"
#include "state.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LABEL "config.json"

static void
ctx_release (scmp_filter_ctx *ctx)
{
  if (*ctx)
    seccomp_release (*ctx);
}
#define cleanup_scmp __attribute__ ((cleanup (ctx_release)))

static bool
uses_notify (const struct ar_seccomp *sc)
{
  size_t i;
  for (i = 0; i < sc->n_syscalls; i++)
    if (sc->syscalls[i].action && strcmp (sc->syscalls[i].action, "SCMP_ACT_NOTIFY") == 0)
      return true;
  return false;
}

/* With a listener the init loads the filter before it is done: its own
 * writes (exec.fifo, the start report) would wait on the agent. */
static int
check_notify_names (const struct ar_seccomp *sc, ar_error **err)
{
  for (size_t i = 0; i < sc->n_syscalls; i++)
    if (sc->syscalls[i].action && strcmp (sc->syscalls[i].action, "SCMP_ACT_NOTIFY") == 0)
      for (size_t j = 0; j < sc->syscalls[i].n_names; j++)
        if (sc->syscalls[i].names[j] && strcmp (sc->syscalls[i].names[j], "write") == 0)
          return ar_err (err, 0,
                         LABEL ": linux.seccomp.syscalls[%zu]: SCMP_ACT_NOTIFY cannot be used for the write "
                               "syscall",
                         i);
  return 0;
}

static bool
action_lets_through (uint32_t act)
{
  return act == SCMP_ACT_ALLOW || act == SCMP_ACT_LOG || act == SCMP_ACT_NOTIFY;
}

/* The runtime calls `name` after the filter is loaded: refuse a profile that
 * denies it, so the failure is a clear message instead of a process that dies
 * of SIGSYS or an execve that fails with a borrowed errno. */
static int
check_needed_syscall (const struct ar_seccomp *sc, const char *name, ar_error **err)
{
  uint32_t def, act;
  bool allowed_by_rule = false;
  size_t i, j;

  ar_seccomp_action_value (sc->default_action, sc->has_default_errno_ret, sc->default_errno_ret, &def);
  for (i = 0; i < sc->n_syscalls; i++)
    {
      const struct ar_seccomp_rule *r = &sc->syscalls[i];
      for (j = 0; j < r->n_names; j++)
        {
          if (!r->names[j] || strcmp (r->names[j], name) != 0)
            continue;
          ar_seccomp_action_value (r->action, r->has_errno_ret, r->errno_ret, &act);
          if (action_lets_through (act))
            allowed_by_rule = true;
          else if (r->n_args == 0 && act != def)
            return ar_err (err, 0,
                           LABEL ": linux.seccomp.syscalls[%zu]: seccomp profile denies %s (%s), "
                                 "which the runtime needs to start the process",
                           i, name, r->action);
        }
    }
  if (!allowed_by_rule && !action_lets_through (def))
    return ar_err (err, 0,
                   LABEL ": linux.seccomp.defaultAction: seccomp profile denies %s (%s and no rule allows it), "
                         "which the runtime needs to start the process",
                   name, sc->default_action);
  return 0;
}

static enum scmp_compare
op_value (enum ar_seccomp_op op)
{
  switch (op)
    {
    case AR_OP_NE: return SCMP_CMP_NE;
    case AR_OP_LT: return SCMP_CMP_LT;
    case AR_OP_LE: return SCMP_CMP_LE;
    case AR_OP_EQ: return SCMP_CMP_EQ;
    case AR_OP_GE: return SCMP_CMP_GE;
    case AR_OP_GT: return SCMP_CMP_GT;
    case AR_OP_MASKED_EQ: return SCMP_CMP_MASKED_EQ;
    }
  return _SCMP_CMP_MIN;
}

/* As runc: arguments with distinct indexes are ANDed in one rule; when an
 * index repeats, each comparison becomes its own rule (ORed). */
static int
add_rule (scmp_filter_ctx ctx, const struct ar_seccomp_rule *r, size_t ri, int nr, uint32_t act, ar_error **err)
{
  struct scmp_arg_cmp cmp[6];
  unsigned int count[6] = { 0 };
  bool repeated = false;
  size_t j;
  int ret;

  if (r->n_args > 6)
    repeated = true;
  for (j = 0; j < r->n_args; j++)
    if (++count[r->args[j].index] > 1)
      repeated = true;
  for (j = 0; j < r->n_args && j < 6; j++)
    cmp[j] = (struct scmp_arg_cmp){ r->args[j].index, op_value (r->args[j].op), r->args[j].value, r->args[j].value_two };
  if (!repeated)
    ret = seccomp_rule_add_array (ctx, act, nr, (unsigned) r->n_args, cmp);
  else
    for (ret = 0, j = 0; j < r->n_args && ret == 0; j++)
      {
        struct scmp_arg_cmp one = { r->args[j].index, op_value (r->args[j].op), r->args[j].value, r->args[j].value_two };
        ret = seccomp_rule_add_array (ctx, act, nr, 1, &one);
      }
  if (ret < 0)
    return ar_err (err, -ret, LABEL ": linux.seccomp.syscalls[%zu]: seccomp_rule_add", ri);
  return 0;
}

static int
add_rules (scmp_filter_ctx ctx, const struct ar_seccomp *sc, uint32_t def, ar_error **err)
{
  size_t i, j;

  for (i = 0; i < sc->n_syscalls; i++)
    {
      const struct ar_seccomp_rule *r = &sc->syscalls[i];
      uint32_t act;

      ar_seccomp_action_value (r->action, r->has_errno_ret, r->errno_ret, &act);
      if (act == def)
        {
          ar_debug ("seccomp: syscalls[%zu]: same action as the default, skipped", i);
          continue;
        }
      for (j = 0; j < r->n_names; j++)
        {
          int nr = seccomp_syscall_resolve_name (r->names[j]);
          if (nr == __NR_SCMP_ERROR)
            {
              ar_debug ("seccomp: syscall \"%s\" unknown to libseccomp %u.%u.%u, skipped", r->names[j],
                        seccomp_version ()->major, seccomp_version ()->minor, seccomp_version ()->micro);
              continue;
            }
          if (add_rule (ctx, r, i, nr, act, err) < 0)
            return ar_err_prefix (err, "syscall %s", r->names[j]);
        }
    }
  return 0;
}

/* Export the filter as BPF through a memfd and read it back into memory. */
static int
export_bpf (scmp_filter_ctx ctx, struct ar_seccomp_prog *prog, ar_error **err)
{
  cleanup_close int fd = memfd_create ("agentrun-seccomp-bpf", MFD_CLOEXEC);
  struct stat st;
  ssize_t n;
  int ret;

  if (fd < 0)
    return ar_err (err, errno, "seccomp: memfd_create");
  ret = seccomp_export_bpf (ctx, fd);
  if (ret < 0)
    return ar_err (err, -ret, "seccomp: seccomp_export_bpf");
  if (fstat (fd, &st) < 0)
    return ar_err (err, errno, "seccomp: fstat of the exported filter");
  if (st.st_size <= 0 || st.st_size % sizeof (struct sock_filter) != 0)
    return ar_err (err, 0, "seccomp: exported filter has a bad size (%lld bytes)", (long long) st.st_size);
  prog->len = (size_t) st.st_size / sizeof (struct sock_filter);
  if (prog->len > BPF_MAXINSNS)
    return ar_err (err, 0, "seccomp: the profile compiles to %zu BPF instructions, more than the kernel's %d",
                   prog->len, BPF_MAXINSNS);
  prog->insns = xmalloc0 ((size_t) st.st_size);
  n = pread (fd, prog->insns, (size_t) st.st_size, 0);
  if (n != st.st_size)
    return ar_err (err, n < 0 ? errno : EIO, "seccomp: reading back the exported filter");
  return 0;
}

int
ar_seccomp_export (void *scmp_ctx, bool notify, struct ar_seccomp_prog **out, ar_error **err)
{
  struct ar_seccomp_prog *prog = xmalloc0 (sizeof *prog);
  prog->notify = notify;
  prog->flags = notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
  if (export_bpf ((scmp_filter_ctx) scmp_ctx, prog, err) < 0)
    {
      ar_seccomp_prog_free (prog);
      return -1;
    }
  *out = prog;
  return 0;
}

static int
build (const struct ar_seccomp *sc, struct ar_seccomp_prog *prog, ar_error **err)
{
  cleanup_scmp scmp_filter_ctx ctx = NULL;
  uint32_t def, arch;
  size_t i;
  int ret;

  ar_seccomp_action_value (sc->default_action, sc->has_default_errno_ret, sc->default_errno_ret, &def);
  ctx = seccomp_init (def);
  if (!ctx)
    return ar_err (err, EINVAL, "seccomp: seccomp_init with %s", sc->default_action);
  /* We set no_new_privs ourselves (process.noNewPrivileges) and load with seccomp(2). */
  if ((ret = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0)
    return ar_err (err, -ret, "seccomp: seccomp_attr_set(CTL_NNP)");
  /* A binary tree keeps long allowlists fast; the filter is the same without it. */
  if (seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0)
    ar_debug ("seccomp: binary tree optimisation unavailable");
  for (i = 0; i < sc->n_architectures; i++)
    {
      ar_seccomp_arch_value (sc->architectures[i], &arch);
      ret = seccomp_arch_add (ctx, arch);
      if (ret < 0 && ret != -EEXIST)
        return ar_err (err, -ret, LABEL ": linux.seccomp.architectures[%zu]: seccomp_arch_add %s", i,
                       sc->architectures[i]);
    }
  if (add_rules (ctx, sc, def, err) < 0 || export_bpf (ctx, prog, err) < 0)
    return -1;
  /* A default that lets calls through has nothing to fall back from. */
  if (action_lets_through (def))
    return 0;
  return ar_seccomp_enosys_prefix (sc, prog, err);
}

static unsigned int
filter_flags (const struct ar_seccomp *sc, bool notify)
{
  unsigned int flags = 0, f;
  size_t i;

  for (i = 0; i < sc->n_flags; i++)
    if (ar_seccomp_flag_value (sc->flags[i], &f) == 0)
      flags |= f;
  if (notify)
    {
      flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
      /* TSYNC and a listener both want the return value: ESRCH instead of a tid. */
      if (flags & SECCOMP_FILTER_FLAG_TSYNC)
        flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    }
  else if (flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
    {
      /* Only meaningful with a listener; the kernel refuses it alone. */
      ar_debug ("seccomp: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV without SCMP_ACT_NOTIFY rules, ignored");
      flags &= ~(unsigned) SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    }
  return flags;
}

static long
elapsed_us (const struct timespec *t0)
{
  struct timespec t1;
  clock_gettime (CLOCK_MONOTONIC, &t1);
  return (t1.tv_sec - t0->tv_sec) * 1000000L + (t1.tv_nsec - t0->tv_nsec) / 1000;
}

int
ar_seccomp_compile_cached (const struct ar_seccomp *sc, const char *state_root, struct ar_seccomp_prog **out,
                           ar_error **err)
{
  struct ar_seccomp_prog *prog = NULL;
  unsigned char key[AR_SHA256_LEN];
  bool notify = uses_notify (sc);
  struct timespec t0;

  clock_gettime (CLOCK_MONOTONIC, &t0);
  if (ar_seccomp_validate (sc, err) < 0 || check_needed_syscall (sc, "execve", err) < 0)
    return -1;
  if (notify && check_notify_names (sc, err) < 0)
    return -1;
  if (notify && check_needed_syscall (sc, "sendmsg", err) < 0)
    return ar_err_prefix (err, "with SCMP_ACT_NOTIFY the listener fd is passed with sendmsg after loading");
  if (state_root)
    {
      ar_seccomp_cache_key (sc, key);
      if (ar_seccomp_cache_load (state_root, key, &prog) == 0)
        {
          prog->flags = filter_flags (sc, notify);
          prog->notify = notify;
          ar_debug ("seccomp: filter of %zu instructions from the cache in %ld us", prog->len, elapsed_us (&t0));
          *out = prog;
          return 0;
        }
    }
  prog = xmalloc0 (sizeof *prog);
  prog->flags = filter_flags (sc, notify);
  prog->notify = notify;
  if (build (sc, prog, err) < 0)
    {
      ar_seccomp_prog_free (prog);
      return -1;
    }
  ar_debug ("seccomp: compiled a filter of %zu instructions in %ld us", prog->len, elapsed_us (&t0));
  if (state_root)
    ar_seccomp_cache_store (state_root, key, prog);
  *out = prog;
  return 0;
}

int
ar_seccomp_build_cached (const char *name, bool notify, const char *state_root,
                         int (*build) (struct ar_seccomp_prog **out, void *arg, ar_error **err), void *arg,
                         struct ar_seccomp_prog **out, ar_error **err)
{
  unsigned char key[AR_SHA256_LEN];
  if (state_root)
    {
      ar_seccomp_cache_key_named (name, key);
      if (ar_seccomp_cache_load (state_root, key, out) == 0)
        {
          (*out)->notify = notify;
          (*out)->flags = notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
          ar_debug ("seccomp: %s: %zu instructions from the cache", name, (*out)->len);
          return 0;
        }
    }
  if (build (out, arg, err) < 0)
    return -1;
  ar_debug ("seccomp: %s: compiled, %zu instructions", name, (*out)->len);
  if (state_root)
    ar_seccomp_cache_store (state_root, key, *out);
  return 0;
}

int
ar_seccomp_compile (const struct ar_seccomp *sc, struct ar_seccomp_prog **out, ar_error **err)
{
  return ar_seccomp_compile_cached (sc, NULL, out, err);
}

int
ar_seccomp_load (struct ar_seccomp_prog *prog, int *listener_fd, ar_error **err)
{
  struct sock_fprog fp = { .len = (unsigned short) prog->len, .filter = prog->insns };
  long ret;

  if (listener_fd)
    *listener_fd = -1;
  ret = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, prog->flags, &fp);
  if (ret < 0)
    {
      int e = errno;
      if (e == EACCES)
        return ar_err (err, e, "seccomp(SECCOMP_SET_MODE_FILTER): loading a filter needs no_new_privs or CAP_SYS_ADMIN");
      if (e == ESRCH)
        return ar_err (err, e, "seccomp(SECCOMP_SET_MODE_FILTER): another thread could not be synchronised (TSYNC)");
      return ar_err (err, e, "seccomp(SECCOMP_SET_MODE_FILTER, flags 0x%x)", prog->flags);
    }
  if (prog->notify)
    {
      if (listener_fd)
        *listener_fd = (int) ret;
      else
        close ((int) ret);
    }
  return 0;
}

void
ar_seccomp_prog_free (struct ar_seccomp_prog *prog)
{
  if (!prog)
    return;
  free (prog->insns);
  free (prog);
}

static int
send_with_fd (int sock, const char *buf, size_t len, int fd, const char *path, ar_error **err)
{
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE (sizeof (int))];
  } ctl;
  struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
  struct cmsghdr *cm;
  ssize_t w;

  memset (&ctl, 0, sizeof ctl);
  cm = CMSG_FIRSTHDR (&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &fd, sizeof (int));
  do
    w = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return ar_err (err, errno, "seccomp listener: sendmsg to %s", path);
  /* The fd went with the first byte; the rest of the JSON follows plainly. */
  for (buf += w, len -= (size_t) w; len > 0; buf += w, len -= (size_t) w)
    {
      w = send (sock, buf, len, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        w = 0;
      else if (w < 0)
        return ar_err (err, errno, "seccomp listener: send to %s", path);
    }
  return 0;
}

int
ar_seccomp_send_listener (const struct ar_seccomp *sc, int listener_fd, const char *state_json, ar_error **err)
{
  struct ar_state st = { 0 };
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  cleanup_free char *meta = NULL, *doc = NULL;
  cleanup_close int sock = -1;
  const char *path = sc->listener_path;

  if (!path || !*path)
    return ar_err (err, 0, LABEL ": linux.seccomp.listenerPath: required with SCMP_ACT_NOTIFY");
  if (strlen (path) >= sizeof addr.sun_path)
    return ar_err (err, ENAMETOOLONG, LABEL ": linux.seccomp.listenerPath: %s", path);
  if (ar_state_parse (state_json, strlen (state_json), &st, err) < 0)
    return ar_err_prefix (err, "seccomp listener: container state");
  const char *md = sc->listener_metadata ? sc->listener_metadata : "";
  size_t cap = strlen (md) * 6 + 1;
  meta = xmalloc0 (cap);
  ar_json_escape (meta, cap, md);
  doc = xasprintf ("{\"ociVersion\":\"%s\",\"fds\":[\"seccompFd\"],\"pid\":%d,\"metadata\":\"%s\",\"state\":%s}",
                   AR_SPEC_VERSION, (int) st.pid, meta, state_json);
  ar_state_clear (&st);
  strcpy (addr.sun_path, path);
  sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return ar_err (err, errno, "seccomp listener: socket");
  if (connect (sock, (struct sockaddr *) &addr, sizeof addr) < 0)
    return ar_err (err, errno,
                   "seccomp listener: failed to connect with seccomp agent: connect to %s "
                   "(linux.seccomp.listenerPath)",
                   path);
  return send_with_fd (sock, doc, strlen (doc), listener_fd, path, err);
}
