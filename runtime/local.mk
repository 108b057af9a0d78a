# runtime/: the container library (libagentrun.a): lifecycle, namespaces,
# process, kernel concerns; fs/ (the rootfs and what is mounted in it) and
# cgroups/ (cgroup managers, D-Bus) are part of it. common, spec, hooks.
noinst_LIBRARIES += libagentrun.a
libagentrun_a_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS) $(SECCOMP_CFLAGS) $(CAP_CFLAGS)
libagentrun_a_CPPFLAGS = $(AM_CPPFLAGS) $(RUNTIME_INC)
libagentrun_a_SOURCES = \
	runtime/state.c runtime/state.h runtime/namespaces.c runtime/namespaces.h runtime/kfile.c runtime/kfile.h runtime/caps.c runtime/caps.h \
	runtime/process.c runtime/process.h runtime/terminal.c runtime/terminal.h runtime/signals.c runtime/signals.h \
	runtime/selfexe.c runtime/selfexe.h runtime/sync.h runtime/init.c runtime/pid1.c runtime/pid1.h runtime/janitor.c runtime/janitor.h runtime/container.c runtime/container.h runtime/context.h \
	runtime/delete.c runtime/exec.c runtime/exec.h \
	runtime/seccomp.c runtime/seccomp.h runtime/seccomp_names.c runtime/seccomp_enosys.c runtime/seccomp_cache.c runtime/seccomp_cache.h \
	runtime/lsm.c runtime/lsm.h runtime/passwd.c runtime/passwd.h \
	runtime/rootless.c runtime/rootless.h \
	runtime/landlock.c runtime/landlock.h \
	runtime/unixconn.c runtime/unixconn.h runtime/unixconn_serve.c runtime/unixconn_supervisor.c runtime/unixconn_diag.c runtime/unixconn_msg.c runtime/unixconn_sockets.c \
	runtime/fs/rootfs.c runtime/fs/rootfs_detach.c runtime/fs/rootfs.h runtime/fs/mounts.c runtime/fs/mounts.h \
	runtime/fs/devices.c runtime/fs/devices.h runtime/fs/masks.c runtime/fs/masks.h runtime/fs/pathutil.c runtime/fs/pathutil.h \
	runtime/fs/copyup.c runtime/fs/copyup.h \
	runtime/cgroups/cgroups.c runtime/cgroups/cgroups.h runtime/cgroups/cgroups_internal.h runtime/cgroups/cgroups_layout.c \
	runtime/cgroups/cgroups_fs.c runtime/cgroups/cgroups_apply.c runtime/cgroups/cgroups_v1.c runtime/cgroups/cgroups_v2.c \
	runtime/cgroups/cgroups_ebpf.c runtime/cgroups/cgroups_procs.c runtime/cgroups/cgroups_plan.c runtime/cgroups/cgroups_systemd.c \
	runtime/cgroups/cgroups_stats.c runtime/cgroups/cgroups_oom.c \
	runtime/cgroups/dbus.c runtime/cgroups/dbus.h runtime/cgroups/dbus_wire.c runtime/cgroups/dbus_wire.h

# What links the container library, in layer order (highest first).
AGENTRUN_LIBS = libagentrun.a libarhooks.a libarspec.a libarcommon.a $(SECCOMP_LIBS) $(CAP_LIBS) $(YAJL_LIBS)
