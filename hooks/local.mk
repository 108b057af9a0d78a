# hooks/: running OCI hooks. Part of libagentrun.a (see runtime/local.mk).
# Listed into libagentrun_a_SOURCES by runtime/local.mk.
HOOKS_SOURCES = hooks/hooks.c hooks/hooks.h
# podman's OCI hooks directory entry for agentrun-netproxy, made from its
# .in with where this build installs the binary (contrib/local.mk).
hooksddir = $(datadir)/containers/oci/hooks.d
nodist_hooksd_DATA = hooks/hooks.d/agentrun-netproxy.json
