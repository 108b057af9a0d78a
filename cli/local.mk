# cli/: the agentrun binary: main and one cmd_*.c per command, on top of
# every library.
bin_PROGRAMS += agentrun
agentrun_SOURCES = \
	cli/main.c cli/commands.h cli/cmd_common.h \
	cli/cmd_create.c cli/cmd_run.c cli/cmd_start.c cli/cmd_state.c cli/cmd_kill.c cli/cmd_delete.c \
	cli/cmd_list.c cli/cmd_ps.c cli/cmd_exec.c cli/cmd_update.c cli/cmd_pause.c cli/cmd_events.c \
	cli/cmd_spec.c cli/cmd_validate.c cli/cmd_features.c \
	cli/cmd_sandbox.c cli/cmd_trust.c cli/cmd_check.c cli/cmd_probe.c cli/cmd_version.c
agentrun_CFLAGS = $(libagentrun_a_CFLAGS)
agentrun_CPPFLAGS = $(AM_CPPFLAGS) $(CLI_INC)
agentrun_LDADD = $(SANDBOX_LIBS)
