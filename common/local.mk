# common/: what every layer uses (errors, util, strio, path names, clock, log, the option
# parser, sha256, fault injection). libc only.
noinst_LIBRARIES += libarcommon.a
libarcommon_a_CPPFLAGS = $(AM_CPPFLAGS) $(COMMON_INC)
libarcommon_a_SOURCES = \
	common/error.c common/error.h common/util.h \
	common/strio.c common/strio.h common/pathname.c common/pathname.h common/clock.c common/clock.h common/hostname.c common/hostname.h \
	common/log.c common/log.h common/cli.c common/cli.h \
	common/sha256.c common/sha256.h common/fault.c common/fault.h common/size.c common/size.h
