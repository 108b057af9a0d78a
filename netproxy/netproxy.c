/* agentrun-netproxy: the createRuntime hook. It joins the container's
 * network namespace, binds one listener per endpoint, proves every relay
 * answers, and leaves behind one server process that lives as long as the
 * container's init. It exits 0 only once that server is listening. */
#include "config.h"
#include "confine.h"
#include "optlist.h"
#include "loopback.h"
#include "server.h"
#include "spec_state.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

static const char *prog = "agentrun-netproxy";

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: %s --route NAME:PORT=ADDR=SOCKET... [options] < state.json\n"
           "OCI createRuntime hook: per-endpoint loopback listeners in the container's\n"
           "network namespace; each accepted connection is handed to agentrun-relay on the\n"
           "host through SOCKET.fd (or, without it, spliced to SOCKET).\n\n"
           "  --route R          NAME:PORT=ADDR=SOCKET, e.g.\n"
           "                     api.example.com:443=127.77.0.2=/run/agentrun/relay/api.example.com:443.sock\n"
           "                     *.DOMAIN:PORT=connect=SOCKET: reachable through --connect-proxy only\n"
           "  --config FILE      routes from JSON {\"routes\":[{\"name\",\"port\",\"address\",\"socket\"}]}\n"
           "  --config-from-annotation KEY\n"
           "                     the same, from the file (an absolute path) named by the\n"
           "                     container's annotation KEY in the state on stdin\n"
           "  --idle-timeout S   cut a connection that moved no byte for S seconds (0: never)\n"
           "  --ask SOCKET       hold lookups of unknown names and ask SOCKET (\"ask NAME 443\";\n"
           "                     \"allow RELAY_SOCKET\" adds a route at run time, else NXDOMAIN)\n"
           "  --deny PATTERN     NAME or *.DOMAIN refused by the CONNECT proxy whatever allows it\n"
           "  --audit FILE       append one JSON line per connection and refused lookup\n"
           "  --audit-fd [PID:]FD  the same into a log already open: our FD, or PID's\n"
           "  --dns ADDR         DNS stub address (127.0.0.53); --no-dns to leave it out\n"
           "  --connect-proxy[=ADDR:PORT]  HTTP CONNECT proxy (127.77.0.1:3128)\n"
           "  --user UID:GID     the ids the server drops to once bound (root only; default:\n"
           "                     SUDO_UID:SUDO_GID, else nobody where it reaches the sockets)\n",
           prog);
}

/* --user, else np_ids_default */
static struct np_ids drop_ids;
static bool drop_ids_given;

static int
parse_args (struct np_config *cfg, int argc, char **argv, const char **annotation, ar_error **err)
{
  static const struct option opts[] = {
    { "route", required_argument, NULL, 'r' },
    { "config", required_argument, NULL, 'c' },
    { "audit", required_argument, NULL, 'A' },
    { "dns", required_argument, NULL, 'd' },
    { "audit-fd", required_argument, NULL, 'F' },
    { "no-dns", no_argument, NULL, 'n' },
    { "connect-proxy", optional_argument, NULL, 'p' },
    { "config-from-annotation", required_argument, NULL, 'C' },
    { "idle-timeout", required_argument, NULL, 'i' },
    { "ask", required_argument, NULL, 'a' },
    { "deny", required_argument, NULL, 'D' },
    { "user", required_argument, NULL, 'u' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  static char *px_host;
  int o;
  cfg->dns = true;
  cfg->dns_addr = "127.0.0.53";
  cfg->connect_addr = "127.77.0.1";
  cfg->connect_port = 3128;
  np_list_options_if_asked (argc, argv, opts);
  while ((o = getopt_long (argc, argv, "", opts, NULL)) != -1)
    switch (o)
      {
      case 'r':
        if (routes_add_arg (&cfg->routes, ROUTE_NETPROXY, optarg, err) < 0)
          return -1;
        break;
      case 'c':
        if (routes_load_json (&cfg->routes, ROUTE_NETPROXY, optarg, err) < 0)
          return -1;
        break;
      case 'C': *annotation = optarg; break;
      case 'i':
        if (np_parse_seconds (optarg, &cfg->idle_timeout_ms) < 0)
          return ar_err (err, 0, "--idle-timeout: expected whole seconds, got '%s'", optarg);
        break;
      case 'A': cfg->audit_path = optarg; break;
      case 'F': cfg->audit_fd_ref = optarg; break;
      case 'a':
        if (optarg[0] != '/')
          return ar_err (err, 0, "--ask %s: needs an absolute socket path", optarg);
        cfg->ask_socket = optarg;
        break;
      case 'D':
        if (!ar_host_name_ok (optarg, true))
          return ar_err (err, 0, "--deny %s: not a host name or *.DOMAIN", optarg);
        cfg->deny = xrealloc (cfg->deny, (cfg->n_deny + 1) * sizeof *cfg->deny);
        cfg->deny[cfg->n_deny++] = optarg;
        break;
      case 'd': cfg->dns_addr = optarg; break;
      case 'u':
        if (np_ids_parse (optarg, &drop_ids, err) < 0)
          return -1;
        drop_ids_given = true;
        break;
      case 'n': cfg->dns = false; break;
      case 'p':
        cfg->connect_proxy = true;
        if (optarg && route_split_hostport (optarg, &px_host, &cfg->connect_port) < 0)
          return ar_err (err, 0, "--connect-proxy: expected ADDR:PORT, got '%s'", optarg);
        if (optarg)
          cfg->connect_addr = px_host;
        break;
      case 'h': usage (stdout); exit (0);
      default: usage (stderr); exit (2);
      }
  if (optind < argc)
    return ar_err (err, 0, "unexpected argument '%s'", argv[optind]);
  if (cfg->routes.n == 0 && !*annotation && !cfg->ask_socket)
    return ar_err (err, 0, "no route: give --route, --config or --config-from-annotation");
  return 0;
}

/* --config-from-annotation: the annotation names the routes file. It comes
 * from the container's config, so it is checked like untrusted input: an
 * absolute path to a regular file, opened once and checked on that fd (no
 * window between the check and the read; O_NONBLOCK so a FIFO cannot
 * hang the hook before fstat refuses it). */
static int
load_annotation_config (struct np_config *cfg, const struct ar_state *st, const char *key, ar_error **err)
{
  const char *path = NULL;
  for (size_t i = 0; i < st->n_annotations; i++)
    if (strcmp (st->annotations[i].key, key) == 0)
      path = st->annotations[i].value;
  if (!path)
    return ar_err (err, 0, "annotation %s: not set in the container state", key);
  if (path[0] != '/')
    return ar_err (err, 0, "annotation %s: '%s' is not an absolute path", key, path);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return ar_err (err, errno, "annotation %s: open %s", key, path);
  if (routes_load_json_fd (&cfg->routes, ROUTE_NETPROXY, fd, path, false, err) < 0)
    return ar_err_prefix (err, "annotation %s", key);
  if (cfg->routes.n == 0)
    return ar_err (err, 0, "annotation %s: %s holds no route", key, path);
  return 0;
}

static int
read_state (struct ar_state *st, ar_error **err)
{
  size_t cap = 1 << 20, len = 0;
  cleanup_free char *buf = xmalloc0 (cap);
  for (;;)
    {
      ssize_t n = read (0, buf + len, cap - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return ar_err (err, errno, "read state from stdin");
      if (n == 0)
        break;
      len += (size_t) n;
      if (len == cap)
        return ar_err (err, 0, "state on stdin larger than 1 MiB");
    }
  if (ar_state_parse (buf, len, st, err) < 0)
    return -1;
  if (st->pid <= 0)
    return ar_err (err, 0, "state: no container pid");
  return 0;
}

static bool
same_ns (pid_t pid, const char *ns)
{
  char path[64];
  struct stat a, b;
  snprintf (path, sizeof path, "/proc/%d/ns/%s", pid, ns);
  if (stat (path, &a) < 0)
    return false;
  snprintf (path, sizeof path, "/proc/self/ns/%s", ns);
  return stat (path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* setns through the pidfd names the process race-free: a recycled pid
 * cannot send us into a stranger's namespace. Privileged callers join
 * the netns directly; the container's user namespace is joined too only
 * when that is what gives us the right (rootless), because a process in
 * a child user namespace loses its host privileges on the relay sockets. */
static int
join_netns (int pidfd, pid_t pid, ar_error **err)
{
  if (same_ns (pid, "net"))
    return ar_err (err, 0,
                   "the container (pid %d) shares our network namespace: "
                   "it needs a private one",
                   pid);
  if (setns (pidfd, CLONE_NEWNET) == 0)
    return 0;
  if (errno != EPERM || same_ns (pid, "user"))
    return ar_err (err, errno, "setns to the network namespace of pid %d", pid);
  if (setns (pidfd, CLONE_NEWUSER | CLONE_NEWNET) < 0)
    return ar_err (err, errno, "setns to the user and network namespaces of pid %d", pid);
  return 0;
}

#ifndef IFLA_GSO_IPV4_MAX_SIZE
#define IFLA_GSO_IPV4_MAX_SIZE 63 /* Linux 6.3; older uapi headers lack it */
#endif
#define LO_GSO_MAX (256 * 1024)

/* Let TCP over this lo build 256 KiB packets instead of 64 KiB (BIG TCP;
 * the IPv4 limit is its own attribute since Linux 6.3). Loopback never
 * cuts them up, so each container -> relay packet costs the sender's
 * transmit and the relay's receive a quarter of the per-packet work:
 * measured with tests/bench/relay.sh, 10 to 20% less CPU per GB for the
 * sender and the relay together. Best effort: a kernel that refuses it
 * only leaves lo as it was. */
static void
lo_big_gso (void)
{
  struct {
    struct nlmsghdr nh;
    struct ifinfomsg ifi;
    struct {
      struct rtattr rta;
      uint32_t v;
    } a[2];
  } req = {
    .nh = { .nlmsg_len = sizeof req, .nlmsg_type = RTM_NEWLINK, .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = 1 },
    .ifi = { .ifi_family = AF_UNSPEC, .ifi_index = (int) if_nametoindex ("lo") },
    .a = { { { RTA_LENGTH (4), IFLA_GSO_MAX_SIZE }, LO_GSO_MAX },
           { { RTA_LENGTH (4), IFLA_GSO_IPV4_MAX_SIZE }, LO_GSO_MAX } },
  };
  cleanup_close int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  char ack[256];
  if (fd >= 0 && req.ifi.ifi_index > 0 && send (fd, &req, sizeof req, 0) == sizeof req)
    (void) recv (fd, ack, sizeof ack, 0);
}

static int
lo_up (ar_error **err)
{
  bool was_down;
  if (ar_loopback_up (&was_down, err) < 0)
    return -1;
  /* Only a lo we brought up: one someone else configured stays theirs
   * (agentrun brings its own up after the createRuntime hooks). */
  if (was_down)
    lo_big_gso ();
  return 0;
}

/* Connect once to each relay socket and hang up: the relay sees an
 * empty connection and does not touch the upstream. */
static int
probe_relays (const struct routes *rs, ar_error **err)
{
  for (size_t i = 0; i < rs->n; i++)
    {
      const struct route *r = &rs->v[i];
      struct sockaddr_un sa = { .sun_family = AF_UNIX };
      if (strlen (r->sock) >= sizeof sa.sun_path)
        return ar_err (err, 0, "relay socket path too long: %s", r->sock);
      strcpy (sa.sun_path, r->sock);
      cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0)
        return ar_err (err, errno, "socket");
      if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
        return ar_err (err, errno, "relay for %s:%d at %s", r->name, r->port, r->sock);
    }
  return 0;
}

static int
cmp_int (const void *a, const void *b)
{
  return *(const int *) a - *(const int *) b;
}

/* The server keeps its listeners and nothing else the runtime handed us:
 * -1 if that cannot be made sure of (a long-lived daemon must not sit on
 * fds of the runtime's). */
static int
close_all_but (int *keep, size_t n)
{
  qsort (keep, n, sizeof *keep, cmp_int);
  unsigned int from = 3;
  for (size_t i = 0; i < n; i++)
    {
      if ((unsigned int) keep[i] > from && syscall (SYS_close_range, from, (unsigned int) keep[i] - 1, 0) < 0)
        return -1;
      if ((unsigned int) keep[i] >= from)
        from = (unsigned int) keep[i] + 1;
    }
  if (syscall (SYS_close_range, from, ~0U, 0) < 0)
    return -1;
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0)
    {
      for (int fd = 0; fd < 3; fd++)
        dup2 (null, fd);
      if (null > 2)
        close (null);
    }
  return 0;
}

/* Whom the server becomes, chosen on the host side before any namespace
 * is joined (a rootless hook is root in the container's user namespace
 * afterwards, and must stay the user it is). --user is taken as given:
 * if those ids cannot reach the relays, the connections fail, logged.
 * The sockets' folders are held open first, so only the sockets' own
 * folder and mode count. The default (the sudo caller, or nobody) has to
 * reach every relay and the --ask socket; where it cannot (root's own
 * sockets), root keeps uid 0 but loses its groups and every capability
 * all the same. */
static int
choose_ids (const struct np_config *cfg, ar_error **err)
{
  if (cfg->ask_socket)
    np_dirs_hold (cfg->ask_socket);
  for (size_t i = 0; i < cfg->routes.n; i++)
    np_dirs_hold (cfg->routes.v[i].sock);
  if (drop_ids_given)
    return geteuid () == 0 ? 0 : ar_err (err, EPERM, "--user: only root changes its ids");
  np_ids_default (&drop_ids);
  bool ok = !cfg->ask_socket || np_ids_can_reach (&drop_ids, cfg->ask_socket);
  for (size_t i = 0; ok && i < cfg->routes.n; i++)
    ok = np_ids_can_reach (&drop_ids, cfg->routes.v[i].sock);
  if (!ok)
    drop_ids.uid = drop_ids.gid = 0;
  return 0;
}

/* The grandchild: detached (new session, reparented), outside the
 * container's pid and mount namespaces since we only joined its net. */
static void __attribute__ ((noreturn)) server_main (struct np_server *S, int pidfd, int ready)
{
  int keep[512];
  size_t n = server_fds (S, keep, ARRAY_SIZE (keep) - 2 - NP_HELD_DIRS);
  n += np_dirs_fds (keep + n, NP_HELD_DIRS);
  keep[n++] = pidfd;
  keep[n++] = ready;
  if (close_all_but (keep, n) < 0)
    _exit (1); /* no readiness byte: the hook reports the failure */
  prctl (PR_SET_NAME, "agentrun-netpx");
  ev_raise_nofile ();
  cleanup_error ar_error *err = NULL;
  /* Confined before it says it is ready: the hook succeeds only then. */
  if (np_confine (&drop_ids, NP_ROLE_NETPROXY, &err) < 0)
    {
      dprintf (ready, "E%s", err->msg);
      _exit (1);
    }
  _exit (server_run (S, pidfd, ready, &err) < 0 ? 1 : 0);
}

static int
spawn_server (struct np_server *S, int pidfd, ar_error **err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return ar_err (err, errno, "pipe");
  pid_t child = fork ();
  if (child < 0)
    return ar_err (err, errno, "fork");
  if (child == 0)
    {
      close (p[0]);
      setsid ();
      pid_t gc = fork ();
      if (gc == 0)
        server_main (S, pidfd, p[1]);
      _exit (gc < 0 ? 1 : 0);
    }
  close (p[1]);
  int status;
  while (waitpid (child, &status, 0) < 0 && errno == EINTR)
    ;
  char b[512];
  ssize_t n;
  while ((n = read (p[0], b, sizeof b - 1)) < 0 && errno == EINTR)
    ;
  close (p[0]);
  if (n > 1 && b[0] == 'E')
    {
      b[n] = '\0';
      return ar_err (err, 0, "the server could not drop its privileges: %s", b + 1);
    }
  if (n != 1 || b[0] != '1')
    return ar_err (err, 0, "the server process failed to start");
  return 0;
}

int
main (int argc, char **argv)
{
  struct np_config cfg = { 0 };
  struct ar_state st = { 0 };
  struct np_server S = { 0 };
  const char *annotation = NULL;
  cleanup_error ar_error *err = NULL;
  int rc = 1;

  /* Keep 0-2 taken so no listener lands there and gets dup2'd over. */
  for (int fd = 0; fd >= 0 && fd <= 2;)
    {
      fd = open ("/dev/null", O_RDWR);
      if (fd > 2)
        close (fd);
    }
  signal (SIGPIPE, SIG_IGN);
  if (parse_args (&cfg, argc, argv, &annotation, &err) < 0 || read_state (&st, &err) < 0)
    goto fail;
  if (annotation && load_annotation_config (&cfg, &st, annotation, &err) < 0)
    goto fail;
  cfg.container = st.id;
  int pidfd = (int) syscall (SYS_pidfd_open, st.pid, 0);
  if (pidfd < 0)
    {
      ar_err (&err, errno, "pidfd_open %d", st.pid);
      goto fail;
    }
  fcntl (pidfd, F_SETFD, FD_CLOEXEC);
  /* another process's fd is reached through /proc while we are still in
   * its user namespace (rootless, join_netns enters the container's) */
  struct audit early = { .fd = -1 };
  char own[16];
  if (cfg.audit_fd_ref && strchr (cfg.audit_fd_ref, ':'))
    {
      if (audit_use_fd (&early, cfg.audit_fd_ref, &err) < 0)
        goto fail;
      snprintf (own, sizeof own, "%d", early.fd);
      cfg.audit_fd_ref = own;
    }
  /* Only --ask adds listeners at run time, after the drop: only then does
   * the namespace let an unprivileged process bind low ports. */
  if (choose_ids (&cfg, &err) < 0 || join_netns (pidfd, st.pid, &err) < 0 || lo_up (&err) < 0
      || (cfg.ask_socket && np_unpriv_ports (&err) < 0) || server_bind (&S, &cfg, &err) < 0
      || probe_relays (&cfg.routes, &err) < 0 || spawn_server (&S, pidfd, &err) < 0)
    goto fail;
  rc = 0;
fail:
  if (rc)
    fprintf (stderr, "%s: %s\n", prog, err->msg);
  /* The server has its own copy (fork): free ours, so a leak checker sees none. */
  free (S.L);
  routes_free (&cfg.routes);
  free (cfg.deny);
  ar_state_clear (&st);
  return rc;
}
