/* A small D-Bus client for talking to systemd on the system bus, written
 * against the specification because the runtime links neither libdbus nor
 * libsystemd: connect (AF_UNIX), SASL EXTERNAL as our uid, Hello, method
 * calls with a deadline, and signals delivered while waiting. */
#ifndef AR_DBUS_H
#define AR_DBUS_H

#include "dbus_wire.h"
#include "error.h"

struct ar_dbus;

/* Connect to the system bus named by $DBUS_SYSTEM_BUS_ADDRESS (its first
 * "unix:path=" or "unix:abstract=" entry) or /run/dbus/system_bus_socket.
 * timeout_ms bounds each step (connect and authentication, then each call
 * and each wait). */
int ar_dbus_open_system (struct ar_dbus **out, int timeout_ms, ar_error **err);
void ar_dbus_close (struct ar_dbus *d);

/* A received message: buf owns the bytes that msg points into. */
struct ar_dbus_reply {
  unsigned char *buf;
  struct ar_dbus_msg msg;
};
void ar_dbus_reply_clear (struct ar_dbus_reply *r);

/* Called for each signal read while waiting; returns 1 when it was the one
 * awaited (ar_dbus_wait returns), 0 to go on. */
typedef int (*ar_dbus_signal_fn) (const struct ar_dbus_msg *m, void *data);

/* Send a call and read until its reply; signals met meanwhile go to fn
 * (may be NULL). An error reply fails with "MEMBER: NAME: text" and stays
 * in *reply (type AR_DBUS_ERROR) for callers that accept some errors; on a
 * transport failure reply->buf is NULL. */
int ar_dbus_call (struct ar_dbus *d, const char *dest, const char *path, const char *iface, const char *member,
                  const char *sig, const struct ar_dbus_buf *body, struct ar_dbus_reply *reply, ar_dbus_signal_fn fn,
                  void *data, ar_error **err);
/* Read messages until fn returns 1, the deadline passes or the bus fails. */
int ar_dbus_wait (struct ar_dbus *d, ar_dbus_signal_fn fn, void *data, ar_error **err);

#endif
