# spec/: the OCI model. common and yajl only.
noinst_LIBRARIES += libarspec.a
libarspec_a_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS)
libarspec_a_CPPFLAGS = $(AM_CPPFLAGS) $(SPEC_INC)
libarspec_a_SOURCES = \
	spec/loopback.c spec/loopback.h \
	spec/model.h \
	spec/state.c spec/spec_state.h \
	spec/json.c spec/json.h spec/jsontree.c spec/names.c spec/names.h \
	spec/parse.c spec/parse_linux.c spec/parse_resources.c spec/parse_internal.h spec/free.c \
	spec/validate.c spec/validate_linux.c spec/validate.h spec/spec.h \
	spec/generate.c spec/generate.h spec/jsongen.c spec/jsongen.h
