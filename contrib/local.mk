# contrib/: configuration snippets, profiles, units.
# Seccomp profiles: the agent profile, installed for `agentrun spec --agent` users and podman.
seccompdir = $(datadir)/agentrun/seccomp
dist_seccomp_DATA = contrib/seccomp/agent.json
EXTRA_DIST += contrib/seccomp/README.md
# Client snippets (issue 8): podman containers.conf drop-in, containerd and CRI-O runtime handlers, a RuntimeClass.
clientsdir = $(datadir)/agentrun
dist_clients_DATA = contrib/containers.conf
containerddir = $(datadir)/agentrun/containerd
dist_containerd_DATA = contrib/containerd/config.toml
criodir = $(datadir)/agentrun/crio
dist_crio_DATA = contrib/crio/agentrun.conf
kubernetesdir = $(datadir)/agentrun/kubernetes
dist_kubernetes_DATA = contrib/kubernetes/runtimeclass.yaml
# The relay as a service (edit its --allow lines, then install into /etc/systemd/system).
systemdunitdir = $(datadir)/agentrun/systemd
dist_systemdunit_DATA = contrib/systemd/agentrun-relay.service
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
