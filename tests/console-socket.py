#!/usr/bin/env python3
"""A tiny --console-socket receiver for the tty tests.

Usage: console-socket.py SOCKET_PATH OUT_FILE [INPUT]
Listens on SOCKET_PATH, takes one pty master over SCM_RIGHTS, writes INPUT
(if given) to it, and copies everything the container prints to OUT_FILE
until the pty closes. Prints "ready" on stdout once listening.
"""
import array
import os
import socket
import sys


def main():
    path, out = sys.argv[1], sys.argv[2]
    data = sys.argv[3].encode() if len(sys.argv) > 3 else b""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    print("ready", flush=True)
    conn, _ = srv.accept()
    fds = array.array("i")
    msg, anc, _, _ = conn.recvmsg(4096, socket.CMSG_SPACE(fds.itemsize))
    for level, kind, blob in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(blob[: fds.itemsize])
    conn.close()
    srv.close()
    if not fds:
        sys.exit("no fd received")
    master = fds[0]
    with open(out + ".name", "wb") as f:
        f.write(msg)
    if data:
        os.write(master, data)
    with open(out, "wb") as f:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            f.write(chunk)
            f.flush()


if __name__ == "__main__":
    main()
