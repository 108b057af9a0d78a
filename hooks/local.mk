# hooks/: running OCI hooks. Part of libagentrun.a (see runtime/local.mk).
# Listed into libagentrun_a_SOURCES by runtime/local.mk.
HOOKS_SOURCES = hooks/hooks.c hooks/hooks.h
# podman's OCI hooks directory entry for agentrun-netproxy; the hook path is
# rewritten to where this build installs the binary.
hooksddir = $(datadir)/containers/oci/hooks.d
EXTRA_DIST += hooks/hooks.d/agentrun-netproxy.json
install-data-local: install-hooks-d
install-hooks-d:
	$(MKDIR_P) $(DESTDIR)$(hooksddir)
	sed 's|/usr/local/bin/agentrun-netproxy|$(bindir)/agentrun-netproxy|' \
	  $(srcdir)/hooks/hooks.d/agentrun-netproxy.json >$(DESTDIR)$(hooksddir)/agentrun-netproxy.json
	chmod 0644 $(DESTDIR)$(hooksddir)/agentrun-netproxy.json
uninstall-local: uninstall-hooks-d
uninstall-hooks-d:
	rm -f $(DESTDIR)$(hooksddir)/agentrun-netproxy.json
.PHONY: install-hooks-d uninstall-hooks-d
