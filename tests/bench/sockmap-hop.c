/* One relay hop, 127.0.0.1:LPORT -> 127.0.0.1:UPORT, joined either by
 * splice (what agentrun-relay does) or in the kernel by a BPF sockhash and an
 * sk_skb verdict program that redirects each socket's bytes to its peer's
 * transmit side (the question: can the relay's second hop leave the
 * process?). tests/bench/sockmap.sh builds and runs it; it is a measuring
 * probe, not part of the relay. One connection at a time.
 *   usage: sockmap-hop splice|verdict|parser LPORT UPORT
 * verdict: stream verdict program alone; parser: with a stream parser too
 * (the older strparser path). The map is keyed by socket cookie: each socket
 * is stored under its peer's cookie, so the program needs no per-connection
 * state. Needs root (CAP_BPF + CAP_NET_ADMIN). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INSN(c, d, s, o, i) \
  ((struct bpf_insn) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* peers: each socket under its peer's cookie, no program attached; run:
 * the verdict map, each socket under its own cookie. Both sockets are in
 * peers before either joins run, so no skb ever meets a missing peer
 * (the redirect would drop it, bytes TCP has already acked). */
static int peers_fd = -1, run_fd = -1;

static void
die (const char *what)
{
  fprintf (stderr, "sockmap-hop: %s: %s\n", what, strerror (errno));
  exit (1);
}

static int
sys_bpf (int cmd, union bpf_attr *a)
{
  return (int) syscall (SYS_bpf, cmd, a, sizeof *a);
}

/* bpf(2) fds are close-on-exec already. */
static int
load (struct bpf_insn *p, unsigned n, enum bpf_attach_type type)
{
  static char log[16384];
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_SK_SKB;
  a.expected_attach_type = type;
  a.insns = (uintptr_t) p;
  a.insn_cnt = n;
  a.license = (uintptr_t) "GPL";
  a.log_buf = (uintptr_t) log;
  a.log_size = sizeof log;
  a.log_level = 1;
  int fd = sys_bpf (BPF_PROG_LOAD, &a);
  if (fd < 0)
    {
      fprintf (stderr, "%s\n", log);
      die ("load an sk_skb program");
    }
  memset (&a, 0, sizeof a);
  a.target_fd = (uint32_t) run_fd;
  a.attach_bpf_fd = (uint32_t) fd;
  a.attach_type = type;
  if (sys_bpf (BPF_PROG_ATTACH, &a) < 0)
    die ("attach an sk_skb program to the sockhash");
  return fd;
}

/* verdict: key = own cookie, bpf_sk_redirect_hash (skb, map, &key, 0):
 * flags 0 is egress, the peer transmits the bytes. */
static void
setup_bpf (int parser)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.map_type = BPF_MAP_TYPE_SOCKHASH;
  a.key_size = 8;
  a.value_size = 4;
  a.max_entries = 1024;
  if ((peers_fd = sys_bpf (BPF_MAP_CREATE, &a)) < 0 || (run_fd = sys_bpf (BPF_MAP_CREATE, &a)) < 0)
    die ("create a sockhash");
  struct bpf_insn v[] = {
    INSN (BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
    INSN (BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_socket_cookie),
    INSN (BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -8, 0),
    INSN (BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0),
    INSN (BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, peers_fd),
    INSN (0, 0, 0, 0, 0),
    INSN (BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0),
    INSN (BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -8),
    INSN (BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0),
    INSN (BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_redirect_hash),
    INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  /* parser: every skb is one whole message. */
  struct bpf_insn p[] = {
    INSN (BPF_LDX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_1, offsetof (struct __sk_buff, len), 0),
    INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  load (v, sizeof v / sizeof v[0], BPF_SK_SKB_STREAM_VERDICT);
  if (parser)
    load (p, sizeof p / sizeof p[0], BPF_SK_SKB_STREAM_PARSER);
}

/* 0, or -1 when the kernel refuses the socket (one no longer ESTABLISHED). */
static int
map_put (int map, int key_fd, int fd)
{
  uint64_t key = 0;
  uint32_t val = (uint32_t) fd;
  socklen_t len = sizeof key;
  if (getsockopt (key_fd, SOL_SOCKET, SO_COOKIE, &key, &len) < 0)
    die ("SO_COOKIE");
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.map_fd = (uint32_t) map;
  a.key = (uintptr_t) &key;
  a.value = (uintptr_t) &val;
  a.flags = BPF_ANY;
  return sys_bpf (BPF_MAP_UPDATE_ELEM, &a) < 0 ? -1 : 0;
}

static uint64_t
bytes_received (int fd)
{
  struct tcp_info t;
  socklen_t len = sizeof t;
  memset (&t, 0, sizeof t);
  getsockopt (fd, IPPROTO_TCP, TCP_INFO, &t, &len);
  return t.tcpi_bytes_received;
}

static int
ioctl_int (int fd, unsigned long req)
{
  int v = 0;
  ioctl (fd, req, &v);
  return v;
}

/* Bytes the socket took to send: acked plus still queued. */
static uint64_t
bytes_written (int fd)
{
  struct tcp_info t;
  socklen_t len = sizeof t;
  memset (&t, 0, sizeof t);
  getsockopt (fd, IPPROTO_TCP, TCP_INFO, &t, &len);
  return t.tcpi_bytes_acked + (uint64_t) ioctl_int (fd, SIOCOUTQ);
}

struct dir { int src, dst; uint64_t in0, out0; int done; };

/* Redirected bytes wait in the peer's psock queue, where no socket option
 * sees them: the peer's FIN may go out only once everything the source
 * received (less its FIN, counted in tcpi_bytes_received) is in the
 * peer's send queue. */
static int
flushed (const struct dir *d)
{
  if (ioctl_int (d->src, SIOCINQ) > 0)
    return 0;
  return bytes_written (d->dst) - d->out0 >= bytes_received (d->src) - d->in0 - 1;
}

static void serve_splice (int a, int b);

static void
serve_bpf (int a, int b)
{
  struct dir d[2] = { { a, b, 0, 0, 0 }, { b, a, 0, 0, 0 } };
  for (int i = 0; i < 2; i++)
    {
      d[i].in0 = bytes_received (d[i].src) - (uint64_t) ioctl_int (d[i].src, SIOCINQ);
      d[i].out0 = bytes_written (d[i].dst);
    }
  if (map_put (peers_fd, a, b) < 0 || map_put (peers_fd, b, a) < 0)
    {
      /* No verdict runs yet: the bytes are all still in the sockets. */
      fprintf (stderr, "sockmap-hop: add to the sockhash: %s; splicing instead\n", strerror (errno));
      serve_splice (a, b);
      return;
    }
  if (map_put (run_fd, a, a) < 0 || map_put (run_fd, b, b) < 0)
    {
      /* One side may already be redirecting: a measuring probe drops the
       * connection rather than mix the two paths. */
      fprintf (stderr, "sockmap-hop: start the verdict: %s; dropping the connection\n", strerror (errno));
      return;
    }
  /* Bytes that came before the socket joined the map wait until the next
   * skb wakes the verdict; SO_RCVLOWAT runs tcp_data_ready now. */
  int one = 1;
  setsockopt (a, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
  setsockopt (b, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
  while (!d[0].done || !d[1].done)
    {
      struct pollfd p[2] = { { a, (short) (d[0].done ? 0 : POLLRDHUP), 0 },
                             { b, (short) (d[1].done ? 0 : POLLRDHUP), 0 } };
      if (poll (p, 2, -1) < 0 && errno != EINTR)
        die ("poll");
      for (int i = 0; i < 2; i++)
        if (!d[i].done && (p[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
          {
            while (!flushed (&d[i]))
              poll (NULL, 0, 1);
            shutdown (d[i].dst, SHUT_WR);
            d[i].done = 1;
          }
    }
}

static void *
pump (void *arg)
{
  int *fd = arg, p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    die ("pipe2");
  fcntl (p[1], F_SETPIPE_SZ, 1 << 20);
  ssize_t n;
  while ((n = splice (fd[0], NULL, p[1], NULL, 1 << 20, SPLICE_F_MOVE)) > 0)
    while (n > 0)
      {
        ssize_t m = splice (p[0], NULL, fd[1], NULL, (size_t) n, SPLICE_F_MOVE);
        if (m <= 0)
          goto out;
        n -= m;
      }
out:
  shutdown (fd[1], SHUT_WR);
  close (p[0]);
  close (p[1]);
  return NULL;
}

static void
serve_splice (int a, int b)
{
  int up[2] = { a, b }, down[2] = { b, a };
  pthread_t t;
  if (pthread_create (&t, NULL, pump, up) != 0)
    die ("pthread_create");
  pump (down);
  pthread_join (t, NULL);
}

static int
tcp_listen (int port)
{
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int one = 1, fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen (fd, 128) < 0)
    die ("listen");
  return fd;
}

int
main (int argc, char **argv)
{
  if (argc != 4)
    {
      fprintf (stderr, "usage: sockmap-hop splice|verdict|parser LPORT UPORT\n");
      return 2;
    }
  int bpf = strcmp (argv[1], "splice") != 0;
  if (bpf)
    setup_bpf (strcmp (argv[1], "parser") == 0);
  int ls = tcp_listen (atoi (argv[2])), one = 1;
  struct sockaddr_in up = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (argv[3])),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  for (;;)
    {
      int a = accept4 (ls, NULL, NULL, SOCK_CLOEXEC);
      int b = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (a < 0 || b < 0 || connect (b, (struct sockaddr *) &up, sizeof up) < 0)
        fprintf (stderr, "sockmap-hop: accept or connect upstream: %s\n", strerror (errno));
      else
        {
          setsockopt (a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          setsockopt (b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          (bpf ? serve_bpf : serve_splice) (a, b);
        }
      if (a >= 0)
        close (a);
      if (b >= 0)
        close (b);
    }
}
