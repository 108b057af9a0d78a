# spec/: the OCI model. libc and yajl only.
noinst_LIBRARIES += libarspec.a
libarspec_a_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS)
libarspec_a_SOURCES = \
	spec/error.c spec/error.h \
	spec/util.h spec/strio.c spec/strio.h spec/clock.c spec/clock.h spec/loopback.c spec/loopback.h \
	spec/model.h \
	spec/state.c spec/state.h \
	spec/agent.c spec/agent.h \
	spec/json.c spec/json.h spec/names.c spec/names.h \
	spec/parse.c spec/parse_linux.c spec/parse_resources.c spec/parse_internal.h spec/free.c \
	spec/validate.c spec/validate_linux.c spec/validate.h spec/spec.h \
	spec/generate.c spec/generate.h
