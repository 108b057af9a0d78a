# runtime/: the container library (libagentrun.a) and the thin CLI.
noinst_LIBRARIES += libagentrun.a
libagentrun_a_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS) $(SECCOMP_CFLAGS) $(CAP_CFLAGS)
libagentrun_a_SOURCES = \
	runtime/log.c runtime/log.h \
	runtime/cli.c runtime/cli.h \
	runtime/state.c runtime/state.h runtime/namespaces.c runtime/namespaces.h runtime/kfile.c runtime/kfile.h runtime/caps.c runtime/caps.h \
	runtime/process.c runtime/process.h runtime/terminal.c runtime/terminal.h runtime/signals.c runtime/signals.h \
	runtime/selfexe.c runtime/selfexe.h runtime/sync.h runtime/init.c runtime/container.c runtime/container.h \
	runtime/delete.c runtime/exec.c runtime/exec.h runtime/cmd_common.h runtime/cmd_create.c runtime/cmd_run.c \
	runtime/cmd_start.c runtime/cmd_state.c runtime/cmd_kill.c runtime/cmd_delete.c runtime/cmd_list.c \
	runtime/cmd_ps.c runtime/cmd_exec.c \
	runtime/cmd_update.c runtime/cmd_pause.c runtime/cmd_events.c \
	runtime/cmd_spec.c runtime/cmd_validate.c runtime/cmd_features.c \
	runtime/rootfs.c runtime/rootfs.h runtime/mounts.c runtime/mounts.h runtime/devices.c runtime/devices.h \
	runtime/masks.c runtime/masks.h runtime/pathutil.c runtime/pathutil.h \
	runtime/seccomp.c runtime/seccomp.h runtime/seccomp_names.c runtime/seccomp_cache.c runtime/seccomp_cache.h \
	runtime/cgroups.c runtime/cgroups.h runtime/cgroups_internal.h runtime/cgroups_layout.c runtime/cgroups_fs.c \
	runtime/cgroups_apply.c runtime/cgroups_v1.c runtime/cgroups_v2.c runtime/cgroups_ebpf.c \
	runtime/cgroups_procs.c runtime/cgroups_systemd.c runtime/cgroups_stats.c runtime/cgroups_oom.c \
	runtime/dbus.c runtime/dbus.h runtime/dbus_wire.c runtime/dbus_wire.h \
	runtime/sandbox.c runtime/sandbox.h runtime/cmd_sandbox.c \
	runtime/profile.c runtime/profile.h runtime/settings.c runtime/settings.h \
	runtime/asker.c runtime/asker.h \
	runtime/check.c runtime/check.h runtime/probes.c runtime/probes.h runtime/cmd_check.c \
	runtime/fault.c runtime/fault.h \
	runtime/copyup.c runtime/copyup.h \
	runtime/lsm.c runtime/lsm.h runtime/passwd.c runtime/passwd.h \
	runtime/rootless.c runtime/rootless.h \
	runtime/landlock.c runtime/landlock.h \
	runtime/unixconn.c runtime/unixconn.h runtime/unixconn_serve.c \
	$(HOOKS_SOURCES) \
	runtime/commands.h

# the agent seccomp profile: installed copy, else the source tree (sandbox.c)
libagentrun_a_CFLAGS += -DAR_PKGDATADIR='"$(pkgdatadir)"' -DAR_SRCDIR='"$(abs_top_srcdir)"'

AGENTRUN_LIBS = libagentrun.a libarspec.a $(SECCOMP_LIBS) $(CAP_LIBS) $(YAJL_LIBS)

bin_PROGRAMS += agentrun
agentrun_SOURCES = runtime/main.c
agentrun_CFLAGS = $(libagentrun_a_CFLAGS)
agentrun_LDADD = $(AGENTRUN_LIBS)
