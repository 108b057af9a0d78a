# hooks/: running OCI hooks. common and spec.
noinst_LIBRARIES += libarhooks.a
libarhooks_a_CFLAGS = $(AM_CFLAGS) $(YAJL_CFLAGS)
libarhooks_a_CPPFLAGS = $(AM_CPPFLAGS) $(HOOKS_INC)
libarhooks_a_SOURCES = hooks/hooks.c hooks/hooks.h
# podman's OCI hooks directory entry for agentrun-netproxy, made from its
# .in with where this build installs the binary (contrib/local.mk).
hooksddir = $(datadir)/containers/oci/hooks.d
nodist_hooksd_DATA = hooks/hooks.d/agentrun-netproxy.json
