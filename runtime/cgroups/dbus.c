/* The D-Bus connection: see dbus.h. The socket is non-blocking and every
 * read and write waits in poll() against one deadline per step, so a bus
 * that stalls or closes mid-message ends the step with an error. */
#include "config.h"
#include "clock.h"
#include "dbus.h"
#include "strio.h"
#include "util.h"

#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#define SYSTEM_BUS "/run/dbus/system_bus_socket"
#define MAX_AUTH_LINE 512

struct ar_dbus {
  int fd;
  int timeout_ms;
  uint32_t serial;
  long long deadline; /* CLOCK_MONOTONIC ms */
  char address[128];
};

static void
arm (struct ar_dbus *d)
{
  d->deadline = ar_now_ms () + d->timeout_ms;
}

static int
wait_fd (struct ar_dbus *d, short events, ar_error **err)
{
  for (;;)
    {
      long long left = d->deadline - ar_now_ms ();
      if (left <= 0)
        return ar_err (err, ETIMEDOUT, "D-Bus %s: no answer within %d ms", d->address, d->timeout_ms);
      struct pollfd p = { .fd = d->fd, .events = events };
      int n = poll (&p, 1, (int) left);
      if (n > 0)
        return 0;
      if (n < 0 && errno != EINTR)
        return ar_err (err, errno, "D-Bus %s: poll", d->address);
    }
}

static int
send_all (struct ar_dbus *d, const void *buf, size_t len, ar_error **err)
{
  const char *p = buf;
  while (len)
    {
      ssize_t n = send (d->fd, p, len, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        {
          if (wait_fd (d, POLLOUT, err) < 0)
            return -1;
          continue;
        }
      if (n < 0)
        return ar_err (err, errno, "D-Bus %s: send", d->address);
      p += n;
      len -= n;
    }
  return 0;
}

static int
recv_exact (struct ar_dbus *d, void *buf, size_t len, ar_error **err)
{
  char *p = buf;
  while (len)
    {
      ssize_t n = recv (d->fd, p, len, 0);
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        {
          if (wait_fd (d, POLLIN, err) < 0)
            return -1;
          continue;
        }
      if (n < 0)
        return ar_err (err, errno, "D-Bus %s: recv", d->address);
      if (n == 0)
        return ar_err (err, 0, "D-Bus %s: the bus closed the connection", d->address);
      p += n;
      len -= n;
    }
  return 0;
}

/* ---- address and connect ---- */

static int
hexval (char c)
{
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* The value of key in one "unix:k=v,k=v" entry, %XX unescaped into out. */
static bool
entry_value (const char *entry, size_t elen, const char *key, char *out, size_t outsz)
{
  size_t klen = strlen (key);
  for (const char *p = entry + 5; p < entry + elen;)
    {
      const char *end = memchr (p, ',', entry + elen - p);
      if (!end)
        end = entry + elen;
      if ((size_t) (end - p) > klen && strncmp (p, key, klen) == 0 && p[klen] == '=')
        {
          size_t n = 0;
          for (const char *c = p + klen + 1; c < end; c++)
            {
              int hi, lo;
              char ch = *c;
              if (ch == '%' && end - c > 2 && (hi = hexval (c[1])) >= 0 && (lo = hexval (c[2])) >= 0)
                ch = (char) (hi * 16 + lo), c += 2;
              if (n + 1 >= outsz || ch == '\0')
                return false;
              out[n++] = ch;
            }
          out[n] = '\0';
          return n > 0;
        }
      p = end + 1;
    }
  return false;
}

/* The first usable unix entry of a ';'-separated address list. */
static int
parse_address (const char *addr, struct sockaddr_un *sa, socklen_t *salen, ar_error **err)
{
  char path[sizeof sa->sun_path];
  for (const char *e = addr; *e;)
    {
      size_t len = strcspn (e, ";");
      bool abstract = false;
      if (len > 5 && strncmp (e, "unix:", 5) == 0
          && (entry_value (e, len, "path", path, sizeof path)
              || (abstract = entry_value (e, len, "abstract", path, sizeof path))))
        {
          *sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
          size_t n = strlen (path);
          memcpy (sa->sun_path + abstract, path, n);
          *salen = offsetof (struct sockaddr_un, sun_path) + abstract + n;
          return 0;
        }
      e += len + (e[len] == ';');
    }
  return ar_err (err, 0,
                 "D-Bus address \"%.200s\" has no unix:path= or unix:abstract= entry (other transports are "
                 "not supported)",
                 addr);
}

static int
connect_bus (struct ar_dbus *d, ar_error **err)
{
  const char *env = getenv ("DBUS_SYSTEM_BUS_ADDRESS");
  const char *addr = env && *env ? env : "unix:path=" SYSTEM_BUS;
  struct sockaddr_un sa;
  socklen_t salen = 0;
  snprintf (d->address, sizeof d->address, "%s", addr);
  if (parse_address (addr, &sa, &salen, err) < 0)
    return -1;
  d->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (d->fd < 0)
    return ar_err (err, errno, "D-Bus: socket");
  if (connect (d->fd, (struct sockaddr *) &sa, salen) < 0)
    {
      if (errno != EINPROGRESS && errno != EAGAIN)
        return ar_err (err, errno, "D-Bus: connect to the system bus at %s", d->address);
      if (wait_fd (d, POLLOUT, err) < 0)
        return -1;
    }
  return 0;
}

/* ---- authentication ---- */

static int
read_line (struct ar_dbus *d, char *line, size_t size, ar_error **err)
{
  /* One byte at a time: nothing may be read past the line, as the binary
   * protocol starts right after it. Lines are short. */
  size_t n = 0;
  while (n + 1 < size)
    {
      if (recv_exact (d, line + n, 1, err) < 0)
        return -1;
      if (++n >= 2 && line[n - 2] == '\r' && line[n - 1] == '\n')
        {
          line[n - 2] = '\0';
          return 0;
        }
    }
  return ar_err (err, 0, "D-Bus %s: authentication line longer than %zu bytes", d->address, size);
}

static int
authenticate (struct ar_dbus *d, ar_error **err)
{
  char uid[32], hex[64], msg[128], line[MAX_AUTH_LINE];
  snprintf (uid, sizeof uid, "%u", (unsigned) geteuid ());
  ar_hex (uid, strlen (uid), hex);
  int n = snprintf (msg, sizeof msg, "%cAUTH EXTERNAL %s\r\n", '\0', hex);
  if (send_all (d, msg, n, err) < 0 || read_line (d, line, sizeof line, err) < 0)
    return -1;
  if (strncmp (line, "OK ", 3) != 0)
    {
      for (char *c = line; *c; c++)
        if ((unsigned char) *c < 0x20)
          *c = '?';
      return ar_err (err, 0, "D-Bus %s: the bus refused EXTERNAL authentication as uid %s: \"%.100s\"", d->address, uid,
                     line);
    }
  return send_all (d, "BEGIN\r\n", 7, err);
}

/* ---- messages ---- */

static int
read_message (struct ar_dbus *d, struct ar_dbus_reply *r, ar_error **err)
{
  unsigned char hdr[AR_DBUS_FIXED_HDR];
  size_t total;
  r->buf = NULL;
  if (recv_exact (d, hdr, sizeof hdr, err) < 0)
    return -1;
  if (ar_dbus_msg_size (hdr, &total, err) < 0)
    return ar_err_prefix (err, "D-Bus %s", d->address);
  r->buf = xmalloc0 (total);
  memcpy (r->buf, hdr, sizeof hdr);
  if (recv_exact (d, r->buf + sizeof hdr, total - sizeof hdr, err) < 0)
    {
      ar_dbus_reply_clear (r);
      return -1;
    }
  if (ar_dbus_parse (r->buf, total, &r->msg, err) < 0)
    {
      ar_dbus_reply_clear (r);
      return ar_err_prefix (err, "D-Bus %s", d->address);
    }
  return 0;
}

void
ar_dbus_reply_clear (struct ar_dbus_reply *r)
{
  free (r->buf);
  r->buf = NULL;
}

int
ar_dbus_call (struct ar_dbus *d, const char *dest, const char *path, const char *iface, const char *member,
              const char *sig, const struct ar_dbus_buf *body, struct ar_dbus_reply *reply, ar_dbus_signal_fn fn,
              void *data, ar_error **err)
{
  struct ar_dbus_buf out = { 0 };
  uint32_t serial = ++d->serial;
  reply->buf = NULL;
  ar_dbus_build_call (&out, serial, dest, path, iface, member, sig, body);
  arm (d);
  int r = send_all (d, out.data, out.len, err);
  ar_dbus_buf_free (&out);
  if (r < 0)
    return -1;
  for (;;)
    {
      if (read_message (d, reply, err) < 0)
        return ar_err_prefix (err, "%s", member);
      const struct ar_dbus_msg *m = &reply->msg;
      if ((m->type == AR_DBUS_RETURN || m->type == AR_DBUS_ERROR) && m->reply_serial == serial)
        break;
      if (m->type == AR_DBUS_SIGNAL && fn)
        fn (m, data); /* remembered by fn; the reply is what we wait for */
      ar_dbus_reply_clear (reply);
    }
  if (reply->msg.type == AR_DBUS_ERROR)
    {
      cleanup_free char *text = ar_dbus_error_text (&reply->msg);
      return ar_err (err, 0, "%s: %s", member, text);
    }
  return 0;
}

int
ar_dbus_wait (struct ar_dbus *d, ar_dbus_signal_fn fn, void *data, ar_error **err)
{
  arm (d);
  for (;;)
    {
      struct ar_dbus_reply r;
      if (read_message (d, &r, err) < 0)
        return -1;
      int done = r.msg.type == AR_DBUS_SIGNAL ? fn (&r.msg, data) : 0;
      ar_dbus_reply_clear (&r);
      if (done)
        return 0;
    }
}

int
ar_dbus_open_system (struct ar_dbus **out, int timeout_ms, ar_error **err)
{
  struct ar_dbus *d = xmalloc0 (sizeof *d);
  d->fd = -1;
  d->timeout_ms = timeout_ms;
  arm (d);
  struct ar_dbus_reply r = { 0 };
  if (connect_bus (d, err) < 0 || authenticate (d, err) < 0
      || ar_dbus_call (d, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", NULL, NULL,
                       &r, NULL, NULL, err)
             < 0)
    {
      ar_dbus_reply_clear (&r);
      ar_dbus_close (d);
      return -1;
    }
  ar_dbus_reply_clear (&r);
  *out = d;
  return 0;
}

void
ar_dbus_close (struct ar_dbus *d)
{
  if (!d)
    return;
  if (d->fd >= 0)
    close (d->fd);
  free (d);
}
