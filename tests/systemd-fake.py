#!/usr/bin/python3
"""A stand-in for systemd's Manager on a private dbus-daemon, for tests/systemd.bats.

It owns org.freedesktop.systemd1 and implements what agentrun's
--systemd-cgroup uses: Subscribe, StartTransientUnit, StopUnit, GetUnit and
the scope's ControlGroup property. Every call is logged as one JSON line
(method, the message's signature, arguments) so the test can check what
agentrun sent; the real D-Bus library parsing agentrun's messages is the
check of the wire format. A started scope gets a cgroup directory under
CGROOT/PARENT (a parent of the test's own, never systemd's real tree), the
pids are moved into it, and JobRemoved is emitted after the reply, as
systemd does.

usage: systemd-fake.py ADDRESS CGROOT PARENT LOG READY [--fail-start ERRNAME:TEXT] [--job-result RESULT]
"""
import json
import os
import signal
import sys
import time

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

MANAGER = "org.freedesktop.systemd1.Manager"
PATH = "/org/freedesktop/systemd1"


def plain(v):
    """dbus-python values as JSON-able Python values."""
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (dbus.Array, list)):
        return [plain(x) for x in v]
    if isinstance(v, (dbus.Struct, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (int, dbus.Byte)):
        return int(v)
    return str(v)


def slice_path(name):
    """"a-b.slice" -> "a.slice/a-b.slice", as systemd nests slices."""
    base = name[: -len(".slice")]
    parts = base.split("-")
    return "/".join("-".join(parts[: i + 1]) + ".slice" for i in range(len(parts)))


def kill_cgroup(d):
    """What stopping a scope does: kill what is left in it, remove it."""
    for _ in range(100):
        try:
            with open(d + "/cgroup.procs") as f:
                pids = [int(x) for x in f.read().split()]
        except FileNotFoundError:
            return
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    try:
        os.rmdir(d)
    except OSError:
        pass  # agentrun removes what is left; the test checks


class Unit(dbus.service.Object):
    def __init__(self, bus, path, cgroup):
        super().__init__(bus, path)
        self.cgroup = cgroup

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
    def Get(self, iface, prop):
        if iface == "org.freedesktop.systemd1.Scope" and prop == "ControlGroup":
            return dbus.String(self.cgroup, variant_level=1)
        raise dbus.exceptions.DBusException("no such property", name="org.freedesktop.DBus.Error.UnknownProperty")


class Manager(dbus.service.Object):
    def __init__(self, bus, args):
        super().__init__(bus, PATH)
        self.bus, self.args, self.units, self.jobs = bus, args, {}, 0

    def log(self, msg, method, *a):
        with open(self.args["log"], "a") as f:
            f.write(json.dumps({"method": method, "signature": msg.get_signature(), "args": plain(list(a))}) + "\n")

    def job(self, unit, result):
        self.jobs += 1
        jid, path = self.jobs, "%s/job/%d" % (PATH, self.jobs)
        GLib.idle_add(lambda: self.JobRemoved(jid, path, unit, result) and False)
        return dbus.ObjectPath(path)

    @dbus.service.signal(MANAGER, signature="uoss")
    def JobRemoved(self, jid, job, unit, result):
        pass

    @dbus.service.method(MANAGER, in_signature="", out_signature="", message_keyword="msg")
    def Subscribe(self, msg):
        self.log(msg, "Subscribe")

    @dbus.service.method(MANAGER, in_signature="ssa(sv)a(sa(sv))", out_signature="o", message_keyword="msg")
    def StartTransientUnit(self, name, mode, props, aux, msg):
        self.log(msg, "StartTransientUnit", name, mode, {str(k): v for k, v in props}, aux)
        fail = self.args.get("fail_start")
        if fail:
            ename, _, text = fail.partition(":")
            raise dbus.exceptions.DBusException(text, name=ename)
        if name in self.units:
            raise dbus.exceptions.DBusException("Unit %s already exists." % name,
                                                name="org.freedesktop.systemd1.UnitExists")
        p = dict(props)
        rel = "/%s/%s/%s" % (self.args["parent"], slice_path(str(p.get("Slice", "system.slice"))), name)
        d = self.args["cgroot"] + rel
        os.makedirs(d)
        for pid in p.get("PIDs", []):
            with open(d + "/cgroup.procs", "w") as f:
                f.write("%d\n" % pid)
        obj = "%s/unit/%s" % (PATH, name.replace(".", "_2e").replace("-", "_2d"))
        self.units[name] = Unit(self.bus, obj, rel)
        return self.job(name, self.args.get("job_result", "done"))

    @dbus.service.method(MANAGER, in_signature="s", out_signature="o", message_keyword="msg")
    def GetUnit(self, name, msg):
        self.log(msg, "GetUnit", name)
        if name not in self.units:
            raise dbus.exceptions.DBusException("Unit %s not loaded." % name, name="org.freedesktop.systemd1.NoSuchUnit")
        return dbus.ObjectPath(self.units[name]._object_path)

    @dbus.service.method(MANAGER, in_signature="ss", out_signature="o", message_keyword="msg")
    def StopUnit(self, name, mode, msg):
        self.log(msg, "StopUnit", name, mode)
        unit = self.units.pop(name, None)
        if not unit:
            raise dbus.exceptions.DBusException("Unit %s not loaded." % name, name="org.freedesktop.systemd1.NoSuchUnit")
        unit.remove_from_connection()
        kill_cgroup(self.args["cgroot"] + unit.cgroup)
        return self.job(name, "done")


def main():
    address, cgroot, parent, log, ready = sys.argv[1:6]
    args = {"cgroot": cgroot, "parent": parent.strip("/"), "log": log}
    rest = sys.argv[6:]
    for i in range(0, len(rest), 2):
        args[rest[i].lstrip("-").replace("-", "_")] = rest[i + 1]
    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(address)
    name = dbus.service.BusName("org.freedesktop.systemd1", bus)
    Manager(bus, args)
    with open(ready, "w") as f:
        f.write(name.get_name() + "\n")
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
