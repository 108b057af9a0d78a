/* run.agentrun.unixconn: the annotation, the connect filter, and its
 * handover to the supervisor (unixconn.h), in the container. */
#include "config.h"
#include "unixconn.h"
#include "cgroups.h"
#include "fault.h"
#include "seccomp.h"
#include "sync.h"
#include "terminal.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define LABEL "annotation " AR_UNIXCONN_ANNOTATION

const char *
ar_unixconn_annotation (const struct ar_kv *kv, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (kv[i].key, AR_UNIXCONN_ANNOTATION) == 0)
      return kv[i].value;
  return NULL;
}

static void
tree_release (yajl_val *v)
{
  ar_json_tree_free (*v);
}

int
ar_unixconn_parse (const char *text, struct ar_unixconn_allow *allow, size_t *n, ar_error **err)
{
  char ebuf[256] = "";
  __attribute__ ((cleanup (tree_release))) yajl_val root = ar_json_tree (text, strlen (text), ebuf, sizeof ebuf);
  if (!root || !YAJL_IS_ARRAY (root))
    {
      return ar_err (err, 0, LABEL ": $: not a JSON array of paths%s%s", *ebuf ? ": " : "", ebuf);
    }
  if (root->u.array.len > AR_UNIXCONN_MAX_ALLOW)
    return ar_err (err, E2BIG, LABEL ": $: more than %d sockets", AR_UNIXCONN_MAX_ALLOW);
  for (size_t i = 0; i < root->u.array.len; i++)
    {
      const char *p = YAJL_GET_STRING (root->u.array.values[i]);
      if (!p || p[0] != '/')
        return ar_err (err, 0, LABEL ": $[%zu]: not an absolute path", i);
      if (!allow)
        continue;
      struct stat st;
      if (stat (p, &st) < 0)
        return ar_err (err, errno, LABEL ": $[%zu]: %s", i, p);
      if (!S_ISSOCK (st.st_mode))
        return ar_err (err, 0, LABEL ": $[%zu]: %s: not a Unix socket", i, p);
      allow[i] = (struct ar_unixconn_allow){ .dev = st.st_dev, .ino = st.st_ino };
    }
  *n = root->u.array.len;
  return 0;
}

int
ar_unixconn_max_sockets (const struct ar_kv *kv, size_t n, long *max, ar_error **err)
{
  *max = 0;
  for (size_t i = 0; i < n; i++)
    if (strcmp (kv[i].key, AR_SOCKCAP_ANNOTATION) == 0)
      {
        const char *v = kv[i].value;
        char *end = NULL;
        errno = 0;
        long m = v && *v >= '0' && *v <= '9' ? strtol (v, &end, 10) : 0;
        if (errno || !end || *end || m < 1 || m > AR_SOCKCAP_MAX)
          return ar_err (err, 0, "annotation " AR_SOCKCAP_ANNOTATION ": \"%s\": not a count from 1 to %d", v ? v : "",
                         AR_SOCKCAP_MAX);
        *max = m;
      }
  return 0;
}

int
ar_unixconn_validate (const struct ar_spec *spec, ar_error **err)
{
  const char *text = ar_unixconn_annotation (spec->annotations, spec->n_annotations);
  size_t n;
  /* the name this annotation had before: a bundle made then would run
   * with every pathname socket open if it were ignored */
  for (size_t i = 0; i < spec->n_annotations; i++)
    if (strcmp (spec->annotations[i].key, AR_UNIXCONN_OLD_ANNOTATION) == 0)
      return ar_err (err, 0,
                     "annotation " AR_UNIXCONN_OLD_ANNOTATION ": now named " AR_UNIXCONN_ANNOTATION
                     " (make the bundle again with agentrun spec --agent)");
  long max;
  if (ar_unixconn_max_sockets (spec->annotations, spec->n_annotations, &max, err) < 0)
    return -1;
  /* the cap needs the supervisor: never a run without the cap asked */
  if (max && !text)
    return ar_err (err, 0,
                   "annotation " AR_SOCKCAP_ANNOTATION ": needs the annotation " AR_UNIXCONN_ANNOTATION
                   " (its supervisor keeps the count)");
  /* the count is the network namespace's: the host's, or one joined, holds
   * others' sockets too */
  if (max && !ar_unixconn_own_netns (spec))
    return ar_err (err, 0, "annotation " AR_SOCKCAP_ANNOTATION ": needs a network namespace of the container's own");
  if (!text)
    return 0;
  const struct ar_seccomp *sc = spec->linux_ ? spec->linux_->seccomp : NULL;
  if (sc && sc->listener_path && *sc->listener_path)
    return ar_err (err, 0,
                   LABEL ": cannot be combined with linux.seccomp.listenerPath (the unixconn supervisor "
                         "would run under that filter)");
  return ar_unixconn_parse (text, NULL, &n, err);
}

static void
ctx_release (scmp_filter_ctx *ctx)
{
  if (*ctx)
    seccomp_release (*ctx);
}

bool
ar_unixconn_own_netns (const struct ar_spec *spec)
{
  const struct ar_linux *l = spec->linux_;
  for (size_t i = 0; l && i < l->n_namespaces; i++)
    if (l->namespaces[i].type == AR_NS_NETWORK)
      return !l->namespaces[i].path || !*l->namespaces[i].path;
  return false;
}

/* socket(2) of an inet family -> user notification. 32-bit x86's
 * socketcall(2) holds its arguments in memory, where a filter cannot look:
 * libseccomp then notifies every socketcall socket(2) (the supervisor
 * makes each itself, whatever the family). accept(2) and accept4(2) of
 * every family (the listener's is not an argument): the supervisor
 * accepts, so that the socket is counted while it lives. */
static int
add_socket_rules (scmp_filter_ctx ctx, ar_error **err)
{
  /* socket(2)'s domain is an int: the upper half of the register is not
   * looked at by the kernel, so it must not be here either */
  const int domains[] = { AF_INET, AF_INET6 };
  for (size_t i = 0; i < sizeof domains / sizeof *domains; i++)
    {
      const struct scmp_arg_cmp d = {
        .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffU, .datum_b = (scmp_datum_t) domains[i]
      };
      int r = seccomp_rule_add_array (ctx, SCMP_ACT_NOTIFY, SCMP_SYS (socket), 1, &d);
      if (r < 0)
        return ar_err (err, -r, "annotation " AR_SOCKCAP_ANNOTATION ": seccomp_rule_add socket");
    }
  int r;
  if ((r = seccomp_rule_add (ctx, SCMP_ACT_NOTIFY, SCMP_SYS (accept), 0)) < 0
      || (r = seccomp_rule_add (ctx, SCMP_ACT_NOTIFY, SCMP_SYS (accept4), 0)) < 0)
    return ar_err (err, -r, "annotation " AR_SOCKCAP_ANNOTATION ": seccomp_rule_add accept");
  /* io_uring makes, accepts and connects sockets with no system call a
   * filter sees (the agent's profile refuses it already; another bundle's
   * might not) */
  if ((r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (io_uring_setup), 0)) < 0)
    return ar_err (err, -r, "annotation " AR_SOCKCAP_ANNOTATION ": seccomp_rule_add io_uring_setup");
  return 0;
}

/* connect(2), sendto(2) with an address, sendmsg(2) and sendmmsg(2) -> user
 * notification, and with the socket cap, socket(2) of AF_INET and
 * AF_INET6 (add_socket_rules); a new listener of the caller's own is refused (its filter, loaded later, would
 * answer before ours for the same action: connects it lets through). All
 * else is allowed here (the container's own profile, a separate filter,
 * still applies: the kernel takes the strictest answer of all filters, so a
 * profile that denies connect wins; one that allows it does not override
 * the notification). libseccomp also catches socketcall(2) of 32-bit x86. */
static int
build_filter (struct ar_seccomp_prog **prog, bool sockets, ar_error **err)
{
  __attribute__ ((cleanup (ctx_release))) scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  int r;
  if (!ctx)
    return ar_err (err, ENOMEM, LABEL ": seccomp_init");
  if ((r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0
      || (r = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0)
    return ar_err (err, -r, LABEL ": seccomp_attr_set");
  if (seccomp_arch_native () == SCMP_ARCH_X86_64)
    {
      if ((r = seccomp_arch_add (ctx, SCMP_ARCH_X86)) < 0 || (r = seccomp_arch_add (ctx, SCMP_ARCH_X32)) < 0)
        return ar_err (err, -r, LABEL ": seccomp_arch_add");
    }
  else if (seccomp_arch_native () == SCMP_ARCH_AARCH64 && (r = seccomp_arch_add (ctx, SCMP_ARCH_ARM)) < 0)
    return ar_err (err, -r, LABEL ": seccomp_arch_add");
  if ((r = seccomp_rule_add (ctx, SCMP_ACT_NOTIFY, SCMP_SYS (connect), 0)) < 0)
    return ar_err (err, -r, LABEL ": seccomp_rule_add connect");
  /* The comparisons are spelled out: libseccomp's SCMP_An macros leave
     datum_b to the compiler, which clang's -Wextra rejects. */
  const struct scmp_arg_cmp to_addr = { .arg = 4, .op = SCMP_CMP_NE, .datum_a = 0, .datum_b = 0 };
  const struct scmp_arg_cmp new_listener[2] = {
    { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = SECCOMP_SET_MODE_FILTER, .datum_b = 0 },
    { .arg = 1,
      .op = SCMP_CMP_MASKED_EQ,
      .datum_a = SECCOMP_FILTER_FLAG_NEW_LISTENER,
      .datum_b = SECCOMP_FILTER_FLAG_NEW_LISTENER },
  };
  if ((r = seccomp_rule_add_array (ctx, SCMP_ACT_NOTIFY, SCMP_SYS (sendto), 1, &to_addr)) < 0)
    return ar_err (err, -r, LABEL ": seccomp_rule_add sendto");
  /* their address lies in memory, where seccomp cannot look */
  if ((r = seccomp_rule_add (ctx, SCMP_ACT_NOTIFY, SCMP_SYS (sendmsg), 0)) < 0
      || (r = seccomp_rule_add (ctx, SCMP_ACT_NOTIFY, SCMP_SYS (sendmmsg), 0)) < 0)
    return ar_err (err, -r, LABEL ": seccomp_rule_add sendmsg");
  if (sockets && add_socket_rules (ctx, err) < 0)
    return -1;
  if ((r = seccomp_rule_add_array (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (seccomp), 2, new_listener)) < 0)
    return ar_err (err, -r, LABEL ": seccomp_rule_add seccomp");
  if (ar_seccomp_export (ctx, true, prog, err) < 0)
    return ar_err_prefix (err, LABEL ": the connect filter");
  return 0;
}

static void
prog_release (struct ar_seccomp_prog **p)
{
  ar_seccomp_prog_free (*p);
}

static int
build_cb (struct ar_seccomp_prog **prog, void *sockets, ar_error **err)
{
  return build_filter (prog, *(bool *) sockets, err);
}

int
ar_unixconn_build (const struct ar_kv *annotations, size_t n_ann, const char *state_root,
                   struct ar_seccomp_prog **filter, ar_error **err)
{
  long max;
  *filter = NULL;
  if (!ar_unixconn_annotation (annotations, n_ann))
    return 0;
  if (ar_unixconn_max_sockets (annotations, n_ann, &max, err) < 0)
    return -1;
  /* the two filters build_filter makes; v1: change it when build_filter
   * changes, or a cached old one is loaded */
  bool sockets = max > 0;
  return ar_seccomp_build_cached (sockets ? "unixconn connect filter v1 with the socket cap"
                                          : "unixconn connect filter v1",
                                  true, state_root, build_cb, &sockets, filter, err);
}

static int
load_filter (struct ar_seccomp_prog *prog, bool sockets, int *listener, ar_error **err)
{
  __attribute__ ((cleanup (prog_release))) struct ar_seccomp_prog *built = NULL;
  if (!prog && build_filter (&built, sockets, err) < 0)
    return -1;
  if (ar_seccomp_load (prog ? prog : built, listener, err) < 0)
    return ar_err_prefix (err, LABEL ": load the connect filter");
  if (*listener < 0)
    return ar_err (err, 0, LABEL ": the connect filter has no listener");
  return 0;
}

/* One message: a 'C' per cgroup file, then 'G', the word that no more
 * come (alone, where there is no file to join). */
int
ar_unixconn_cgroup (int sock, const char *record, ar_error **err)
{
  int fds[AR_FDS_MAX - 1]; /* every v1 controller in a hierarchy of its own, and cgroup2 */
  char tags[AR_FDS_MAX];
  size_t n = 0;
  if (sock < 0)
    return 0;
  if (record && ar_cgroup_self_join_fds (record, true, fds, ARRAY_SIZE (fds), &n, err) < 0)
    return ar_err_prefix (err, "annotation " AR_UNIXCONN_ANNOTATION ": the unixconn supervisor's cgroup");
  memset (tags, 'C', n);
  tags[n] = 'G';
  int r = ar_send_fds (sock, fds, n, tags, n + 1, err);
  for (size_t i = 0; i < n; i++)
    close (fds[i]);
  return r < 0 ? ar_err_prefix (err, "annotation " AR_UNIXCONN_ANNOTATION ": the unixconn supervisor's cgroup") : 0;
}

/* What the supervisor needs, opened before the go (the root, our user
 * and network namespaces, a sock_diag socket), sent after it with the
 * listener and the report fd: one message, a tag per fd, in order. */
struct handover_fds {
  int root, userns, diag, netns;
};

static void
handover_fds_close (struct handover_fds *f)
{
  int *all[] = { &f->root, &f->userns, &f->diag, &f->netns };
  for (size_t i = 0; i < ARRAY_SIZE (all); i++)
    if (*all[i] >= 0)
      {
        close (*all[i]);
        *all[i] = -1;
      }
}

static int
handover_fds_open (struct handover_fds *f, bool own_netns, bool sockets, ar_error **err)
{
  *f = (struct handover_fds){ -1, -1, -1, -1 };
  if ((f->root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
    return ar_err (err, errno, LABEL ": open the root for the unixconn supervisor");
  if ((f->userns = open ("/proc/self/ns/user", O_RDONLY | O_CLOEXEC)) < 0)
    return ar_err (err, errno, LABEL ": the unixconn supervisor needs /proc mounted in the container");
  if (own_netns && (f->diag = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0)
    return ar_err (err, errno, LABEL ": a sock_diag socket for the unixconn supervisor");
  if (sockets && (f->netns = open ("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
    return ar_err (err, errno, "annotation " AR_SOCKCAP_ANNOTATION ": the network namespace for the unixconn supervisor");
  return 0;
}

static int
send_handover (int sock, int listener, const struct handover_fds *f, int report, ar_error **err)
{
  const struct {
    char tag;
    int fd;
  } all[] = { { 'L', listener }, { 'R', f->root },  { 'U', f->userns }, { 'E', STDERR_FILENO },
              { 'D', f->diag },  { 'N', f->netns }, { 'F', report } };
  char tags[AR_FDS_MAX];
  int fds[AR_FDS_MAX];
  size_t n = 0;
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (all[i].fd >= 0)
      {
        tags[n] = all[i].tag;
        fds[n++] = all[i].fd;
      }
  return ar_send_fds (sock, fds, n, tags, n, err);
}

/* After the handover: with a report fd the supervisor answers there, to
 * `start` (which waits for it as for our execve), and we go on: its
 * start-up runs beside ours. Without one, wait for its word. Either way a
 * supervisor that dies takes the listener with it: connect(2) then fails
 * with ENOSYS, never unchecked. */
static int
handover_result (int sock, int report, ar_error **sent, ar_error **err)
{
  char msg[AR_START_REPORT_MAX];
  int fd = -1;
  if (*sent)
    {
      /* Gone before the handover: with a report fd it has said why there,
       * and `start` fails with that; a silent death leaves no one holding
       * the listener once we close it, so connect(2) fails with ENOSYS. */
      if (report >= 0 && ((*sent)->errnum == EPIPE || (*sent)->errnum == ECONNRESET))
        {
          ar_error_freep (sent);
          return 0;
        }
      *err = *sent;
      return ar_err_prefix (err, LABEL ": hand the listener to the unixconn supervisor");
    }
  if (report >= 0)
    return 0;
  ssize_t r = ar_recv_fd (sock, &fd, msg, sizeof msg - 1, err);
  if (fd >= 0)
    close (fd);
  if (r < 0)
    return ar_err_prefix (err, LABEL ": the unixconn supervisor's answer");
  if (r == 0)
    return ar_err (err, 0, LABEL ": the unixconn supervisor exited before it was ready");
  msg[r] = '\0';
  if (msg[0])
    return ar_err (err, 0, "%s", msg);
  return 0;
}

/* The handover sends fds with sendmsg(2), which the filter hands to the
 * supervisor: a thread that exists before the filter is loaded (filters
 * are per thread) sends them, and is gone before we go on. It and the fds
 * it sends are made before the go (ar_unixconn_begin), off the path from
 * the go to the command's exec. */
struct ar_unixconn_handover {
  int sock, listener, report, pipe[2];
  struct handover_fds fds;
  bool sockets;
  pthread_t thread;
  ar_error *err;
};

static void *
handover_main (void *arg)
{
  struct ar_unixconn_handover *h = arg;
  char go;
  if (read (h->pipe[0], &go, 1) != 1 || go != 'L')
    return NULL; /* no filter, nothing to hand over */
  if (ar_fault_fails ("unixconn-handover"))
    ar_err (&h->err, EIO, "sendmsg (a failure injected by the tests)");
  else
    send_handover (h->sock, h->listener, &h->fds, h->report, &h->err);
  return NULL;
}

int
ar_unixconn_begin (const struct ar_kv *annotations, size_t n_ann, int sock, bool own_netns,
                   struct ar_unixconn_handover **out, ar_error **err)
{
  *out = NULL;
  if (!ar_unixconn_annotation (annotations, n_ann))
    return 0;
  if (sock < 0)
    return ar_err (err, EINVAL, LABEL ": no unixconn supervisor was started");
  long max;
  if (ar_unixconn_max_sockets (annotations, n_ann, &max, err) < 0)
    return -1;
  struct ar_unixconn_handover *h = xmalloc0 (sizeof *h);
  *h = (struct ar_unixconn_handover){ .sock = sock, .listener = -1, .report = -1, .pipe = { -1, -1 }, .sockets = max > 0 };
  int r;
  sigset_t all, old;
  if (handover_fds_open (&h->fds, own_netns, h->sockets, err) < 0)
    goto fail;
  if (pipe2 (h->pipe, O_CLOEXEC) < 0)
    {
      ar_err (err, errno, LABEL ": pipe");
      goto fail;
    }
  /* born with every signal blocked: it may outlive the moment our pid 1
   * blocks them to read them later from its signalfd, and a signal taken
   * by this thread then would be lost to the command (a pid 1 drops what it
   * has no handler for) */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  r = pthread_create (&h->thread, NULL, handover_main, h);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (r)
    {
      ar_err (err, r, LABEL ": start the handover thread");
      goto fail;
    }
  *out = h;
  return 0;
fail:
  handover_fds_close (&h->fds);
  if (h->pipe[0] >= 0)
    close (h->pipe[0]);
  if (h->pipe[1] >= 0)
    close (h->pipe[1]);
  free (h);
  return -1;
}

int
ar_unixconn_release (struct ar_unixconn_handover *h, struct ar_seccomp_prog *filter, int report, ar_error **err)
{
  if (!h)
    return 0;
  int loaded = load_filter (filter, h->sockets, &h->listener, err);
  h->report = report;
  /* the listener's number is in our shared fd table; the byte says go */
  if (write (h->pipe[1], loaded < 0 ? "x" : "L", 1) != 1 && loaded == 0)
    loaded = ar_err (err, errno, LABEL ": wake the handover thread");
  if (loaded == 0)
    return 0;
  ar_unixconn_join (h, NULL);
  return -1;
}

int
ar_unixconn_join (struct ar_unixconn_handover *h, ar_error **err)
{
  if (!h)
    return 0;
  pthread_join (h->thread, NULL);
  close (h->pipe[0]);
  close (h->pipe[1]);
  if (h->listener >= 0)
    close (h->listener);
  handover_fds_close (&h->fds);
  /* (h->err, when there is one, is handover_result's to free or pass on) */
  int r = err ? handover_result (h->sock, h->report, &h->err, err) : (ar_error_freep (&h->err), -1);
  free (h);
  return r;
}

int
ar_unixconn_finish (struct ar_unixconn_handover *h, struct ar_seccomp_prog *filter, int report, ar_error **err)
{
  return ar_unixconn_release (h, filter, report, err) < 0 ? -1 : ar_unixconn_join (h, err);
}

int
ar_unixconn_start (const struct ar_kv *annotations, size_t n_ann, struct ar_seccomp_prog *filter, int sock,
                   bool own_netns, int report, ar_error **err)
{
  struct ar_unixconn_handover *h;
  if (ar_unixconn_begin (annotations, n_ann, sock, own_netns, &h, err) < 0)
    return -1;
  return ar_unixconn_finish (h, filter, report, err);
}
