#!/usr/bin/python3
"""A broken D-Bus "bus" on a Unix socket, for tests/systemd.bats: it speaks
just enough of the protocol to get agentrun to its Hello, then misbehaves.

usage: dbus-broken.py SOCKET READY MODE
  reject     refuse the EXTERNAL authentication
  truncate   send the first 10 bytes of a reply, then close (a bus that dies mid-reply)
  byteorder  send a header with an unknown byte-order mark
  huge       send a header announcing a 100 MiB body
"""
import os
import socket
import struct
import sys


def serve(conn, mode):
    buf = b""
    while b"\r\n" not in buf:
        chunk = conn.recv(256)
        if not chunk:
            return
        buf += chunk
    if mode == "reject":
        conn.sendall(b"REJECTED EXTERNAL\r\n")
        conn.recv(256)
        return
    conn.sendall(b"OK 0123456789abcdef0123456789abcdef\r\n")
    got = b""
    while b"Hello" not in got:  # BEGIN, then the whole Hello call
        chunk = conn.recv(4096)
        if not chunk:
            return
        got += chunk
    if mode == "truncate":
        conn.sendall(b"l\x02\x01\x01\x08\x00\x00\x00\x01\x00")
    elif mode == "byteorder":
        conn.sendall(b"X\x02\x01\x01" + b"\x00" * 12)
    elif mode == "huge":
        conn.sendall(b"l\x02\x01\x01" + struct.pack("<III", 100 << 20, 1, 0))


def main():
    path, ready, mode = sys.argv[1:4]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)
    with open(ready, "w") as f:
        f.write("%d\n" % os.getpid())
    while True:
        conn, _ = srv.accept()
        with conn:
            serve(conn, mode)


if __name__ == "__main__":
    main()
