# contrib/: configuration snippets, profiles, units.
# Seccomp profiles: the agent profile, installed for `agentrun spec --agent` users and podman.
seccompdir = $(datadir)/agentrun/seccomp
dist_seccomp_DATA = contrib/seccomp/agent.json
EXTRA_DIST += contrib/seccomp/README.md
# Client snippets: podman containers.conf drop-in, containerd and CRI-O runtime handlers, a RuntimeClass.
clientsdir = $(datadir)/agentrun
nodist_clients_DATA = contrib/containers.conf
containerddir = $(datadir)/agentrun/containerd
nodist_containerd_DATA = contrib/containerd/config.toml
criodir = $(datadir)/agentrun/crio
nodist_crio_DATA = contrib/crio/agentrun.conf
kubernetesdir = $(datadir)/agentrun/kubernetes
dist_kubernetes_DATA = contrib/kubernetes/runtimeclass.yaml
# The relay as a service (edit its --allow lines, then install into /etc/systemd/system).
systemdunitdir = $(datadir)/agentrun/systemd
nodist_systemdunit_DATA = contrib/systemd/agentrun-relay.service
# Snippets that name installed programs are made from their .in with this
# build's paths (configure --prefix, or make install prefix=...): remade at
# every make, written only when they change.
CONTRIB_MADE = contrib/containers.conf contrib/containerd/config.toml contrib/crio/agentrun.conf \
	contrib/systemd/agentrun-relay.service hooks/hooks.d/agentrun-netproxy.json contrib/apparmor/agentrun
EXTRA_DIST += $(CONTRIB_MADE:=.in)
CLEANFILES += $(CONTRIB_MADE)
contrib_subst = sed -e 's|@bindir[@]|$(bindir)|g' -e 's|@datadir[@]|$(datadir)|g'
$(CONTRIB_MADE): contrib-force
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(contrib_subst) $(srcdir)/$@.in >$@.tmp \
	  && { cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@; }
contrib-force:
.PHONY: contrib-force
# The AppArmor userns profile for the installed binary (see contrib/apparmor/agentrun.in,
# made above), installed where AppArmor reads it when configure found or was given that folder.
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
# Agent presets for `agentrun sandbox --agent NAME` (profiles: endpoints, state kept in the home, key variables).
presetsdir = $(datadir)/agentrun/presets
dist_presets_DATA = contrib/presets/claude.json contrib/presets/codex.json contrib/presets/opencode.json \
	contrib/presets/gemini.json
