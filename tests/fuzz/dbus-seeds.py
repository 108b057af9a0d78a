#!/usr/bin/python3
"""Writes the seed corpus of fuzz_dbus (tests/fuzz/corpus/dbus/) with GLib's
own D-Bus marshaller (python3-gi), so the seeds are messages a real bus
sends: the replies and signals agentrun's systemd client reads, in both
byte orders. Run from the source tree: tests/fuzz/dbus-seeds.py"""
import os

from gi.repository import Gio, GLib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "dbus")


def call(member, body=None):
    m = Gio.DBusMessage.new_method_call("org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                        "org.freedesktop.systemd1.Manager", member)
    if body:
        m.set_body(body)
    m.set_serial(3)
    return m


def reply(body, serial=7):
    m = Gio.DBusMessage.new_method_reply(call("X"))
    m.set_reply_serial(serial)
    m.set_sender(":1.1")
    if body:
        m.set_body(body)
    return m


def seeds():
    yield "hello-reply", reply(GLib.Variant("(s)", (":1.42",)))
    yield "job-path", reply(GLib.Variant("(o)", ("/org/freedesktop/systemd1/job/1234",)))
    yield "control-group", reply(GLib.Variant("(v)", (GLib.Variant("s", "/system.slice/x.scope"),)))
    yield "empty-reply", reply(None)
    e = Gio.DBusMessage.new_method_error_literal(call("StartTransientUnit"), "org.freedesktop.DBus.Error.AccessDenied",
                                                  "Access denied\nsecond line")
    e.set_reply_serial(3)
    yield "error", e
    s = Gio.DBusMessage.new_signal("/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "JobRemoved")
    s.set_body(GLib.Variant("(uoss)", (9, "/org/freedesktop/systemd1/job/9", "a-b.scope", "done")))
    s.set_sender(":1.1")
    yield "job-removed", s
    yield "properties", reply(GLib.Variant("(a{sv}as)", ({"A": GLib.Variant("t", 1),
                                                           "B": GLib.Variant("a(sv)", [("x", GLib.Variant("b", True))])},
                                                          ["y", "z"])))
    yield "start-call", call("StartTransientUnit", GLib.Variant(
        "(ssa(sv)a(sa(sv)))", ("u.scope", "fail", [("PIDs", GLib.Variant("au", [1, 2])),
                                                     ("MemoryMax", GLib.Variant("t", 1 << 26))], [])))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, msg in seeds():
        msg.set_serial(1)
        for order, tag in ((Gio.DBusMessageByteOrder.LITTLE_ENDIAN, "le"), (Gio.DBusMessageByteOrder.BIG_ENDIAN, "be")):
            msg.set_byte_order(order)
            with open(os.path.join(OUT, "%s-%s.bin" % (name, tag)), "wb") as f:
                f.write(msg.to_blob(Gio.DBusCapabilityFlags.NONE))


if __name__ == "__main__":
    main()
