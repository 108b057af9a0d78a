# runtime/: the container library (libagentrun.a) and the thin CLI.
noinst_LIBRARIES += libagentrun.a
libagentrun_a_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS) $(SECCOMP_CFLAGS) $(CAP_CFLAGS)
libagentrun_a_SOURCES = \
	runtime/log.c runtime/log.h \
	runtime/cli.c runtime/cli.h \
	runtime/commands.h

AGENTRUN_LIBS = libagentrun.a libarspec.a $(SECCOMP_LIBS) $(CAP_LIBS) $(YAJL_LIBS)

bin_PROGRAMS += agentrun
agentrun_SOURCES = runtime/main.c
agentrun_CFLAGS = $(libagentrun_a_CFLAGS)
agentrun_LDADD = $(AGENTRUN_LIBS)
