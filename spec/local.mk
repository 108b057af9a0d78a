# spec/: the OCI model. libc and yajl only.
noinst_LIBRARIES += libarspec.a
libarspec_a_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS)
libarspec_a_SOURCES = \
	spec/error.c spec/error.h \
	spec/util.h \
	spec/model.h \
	spec/state.c spec/state.h
