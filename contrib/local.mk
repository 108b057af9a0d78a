# contrib/: configuration snippets, profiles, units.
# Seccomp profiles: the agent profile, installed for `agentrun spec --agent` users and podman.
seccompdir = $(datadir)/agentrun/seccomp
dist_seccomp_DATA = contrib/seccomp/agent.json
EXTRA_DIST += contrib/seccomp/README.md
# Client snippets (issue 8): podman containers.conf drop-in, containerd and CRI-O runtime handlers, a RuntimeClass.
clientsdir = $(datadir)/agentrun
dist_clients_DATA = contrib/containers.conf
# The containerd, CRI-O and relay unit snippets name the binaries: installed
# (under $(pkgdatadir)/containerd, crio, systemd) with this build's paths.
PATHED_SNIPPETS = contrib/containerd/config.toml contrib/crio/agentrun.conf contrib/systemd/agentrun-relay.service
EXTRA_DIST += $(PATHED_SNIPPETS)
install-data-local: install-pathed-snippets
install-pathed-snippets:
	@set -e; for f in $(PATHED_SNIPPETS); do \
	  d=$(DESTDIR)$(pkgdatadir)/$${f#contrib/}; $(MKDIR_P) $${d%/*}; echo "  INSTALL  $$d"; \
	  sed -e 's|/usr/local/bin/|$(bindir)/|g' -e 's|/usr/local/share/|$(datadir)/|g' $(srcdir)/$$f >$$d; chmod 0644 $$d; \
	done
uninstall-local: uninstall-pathed-snippets
uninstall-pathed-snippets:
	for f in $(PATHED_SNIPPETS); do rm -f $(DESTDIR)$(pkgdatadir)/$${f#contrib/}; done
.PHONY: install-pathed-snippets uninstall-pathed-snippets
kubernetesdir = $(datadir)/agentrun/kubernetes
dist_kubernetes_DATA = contrib/kubernetes/runtimeclass.yaml
# The relay as a service (edit its --allow lines, then install into /etc/systemd/system): above.
# The AppArmor userns profile for the installed binary (see contrib/apparmor/agentrun.in),
# installed where AppArmor reads it when configure found or was given that folder.
EXTRA_DIST += contrib/apparmor/agentrun.in
CLEANFILES += contrib/apparmor/agentrun
contrib/apparmor/agentrun: $(srcdir)/contrib/apparmor/agentrun.in Makefile
	@mkdir -p contrib/apparmor
	$(AM_V_GEN)sed 's|@bindir[@]|$(bindir)|g' $(srcdir)/contrib/apparmor/agentrun.in >$@.tmp && mv $@.tmp $@
if INSTALL_APPARMOR
nodist_apparmor_DATA = contrib/apparmor/agentrun
endif
# bash completion, loaded by bash-completion under each command's name.
bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = contrib/completion/agentrun
install-data-hook: install-completion-links
install-completion-links:
	cd $(DESTDIR)$(bashcompletiondir) && for n in agentrun-relay agentrun-netproxy; do rm -f $$n; $(LN_S) agentrun $$n; done
uninstall-hook: uninstall-completion-links
uninstall-completion-links:
	rm -f $(DESTDIR)$(bashcompletiondir)/agentrun-relay $(DESTDIR)$(bashcompletiondir)/agentrun-netproxy
.PHONY: install-completion-links uninstall-completion-links
