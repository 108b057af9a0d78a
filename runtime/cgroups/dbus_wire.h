/* The D-Bus wire format (marshalling and parsing of messages), with no I/O,
 * so that the parser can be fuzzed on its own. Only what a client of
 * systemd's Manager needs: we write little-endian messages; we read either
 * byte order. Every read is bounded by the message's own length and every
 * value checked (NUL-terminated strings, signatures, alignment padding is
 * skipped, nesting depth capped), so a hostile bus cannot crash the reader.
 * Specification: https://dbus.freedesktop.org/doc/dbus-specification.html */
#ifndef AR_DBUS_WIRE_H
#define AR_DBUS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "error.h"

enum { AR_DBUS_CALL = 1, AR_DBUS_RETURN = 2, AR_DBUS_ERROR = 3, AR_DBUS_SIGNAL = 4 };

/* The largest message we accept from the bus (systemd's replies are small;
 * the protocol allows 128 MiB, which we refuse to buffer). */
#define AR_DBUS_MAX_MSG (1u << 20)
#define AR_DBUS_FIXED_HDR 16

/* A growable output buffer; alignment is relative to its start, which is
 * the start of the message (header) or of the body (8-aligned in the
 * message, so the same rule holds). */
struct ar_dbus_buf {
  unsigned char *data;
  size_t len, cap;
};

void ar_dbus_buf_free (struct ar_dbus_buf *b);
void ar_dbus_put_align (struct ar_dbus_buf *b, size_t n);
void ar_dbus_put_u32 (struct ar_dbus_buf *b, uint32_t v);
void ar_dbus_put_u64 (struct ar_dbus_buf *b, uint64_t v);
void ar_dbus_put_bool (struct ar_dbus_buf *b, bool v);
void ar_dbus_put_str (struct ar_dbus_buf *b, const char *s); /* 's' and 'o' */
void ar_dbus_put_sig (struct ar_dbus_buf *b, const char *s); /* 'g' */
/* An array: open writes a length placeholder and the padding before the
 * first element (elem_align: 8 for structs); close patches the length,
 * which counts the bytes after that padding. */
struct ar_dbus_arr {
  size_t len_at, start;
};
struct ar_dbus_arr ar_dbus_array_open (struct ar_dbus_buf *b, size_t elem_align);
void ar_dbus_array_close (struct ar_dbus_buf *b, struct ar_dbus_arr a);

/* A method call: header (destination, path, interface, member, signature
 * when body is not empty) and the body, as one message in out. */
void ar_dbus_build_call (struct ar_dbus_buf *out, uint32_t serial, const char *dest, const char *path,
                         const char *iface, const char *member, const char *sig, const struct ar_dbus_buf *body);

/* The total size of a message from its first AR_DBUS_FIXED_HDR bytes;
 * an error when it is malformed or larger than AR_DBUS_MAX_MSG. */
int ar_dbus_msg_size (const unsigned char *hdr, size_t *total, ar_error **err);

/* A parsed message; strings point into the buffer it was parsed from. */
struct ar_dbus_msg {
  int type;
  uint8_t flags;
  bool big_endian;
  uint32_t serial, reply_serial;
  const char *path, *iface, *member, *error_name, *sender, *dest;
  const char *sig; /* "" when the message has no body */
  const unsigned char *body;
  size_t body_len;
};
int ar_dbus_parse (const unsigned char *buf, size_t len, struct ar_dbus_msg *m, ar_error **err);

/* Reading a body value by value. Each getter checks the type's alignment
 * padding, bounds and content; -1 with an error otherwise. */
struct ar_dbus_rd {
  const unsigned char *p;
  size_t len, pos;
  bool big;
  int depth;
};
void ar_dbus_rd_init (struct ar_dbus_rd *r, const struct ar_dbus_msg *m);
int ar_dbus_get_u32 (struct ar_dbus_rd *r, uint32_t *v, ar_error **err);
int ar_dbus_get_str (struct ar_dbus_rd *r, const char **s, ar_error **err); /* 's' and 'o' */
int ar_dbus_get_sig (struct ar_dbus_rd *r, const char **s, ar_error **err);
/* Skip one value of the single complete type at the start of sig. */
int ar_dbus_skip (struct ar_dbus_rd *r, const char *sig, ar_error **err);
/* Skip every value of sig; the body must end exactly there. ar_dbus_parse
 * does this for each message, so a parsed body matches its signature. */
int ar_dbus_skip_body (struct ar_dbus_rd *r, const char *sig, ar_error **err);
/* Is sig a valid signature (every type complete, nesting within limits)? */
bool ar_dbus_sig_valid (const char *sig);

/* An error reply as one printable line: "NAME: first string argument",
 * control characters replaced, at most ~300 bytes. Caller frees. */
char *ar_dbus_error_text (const struct ar_dbus_msg *m);

#endif
