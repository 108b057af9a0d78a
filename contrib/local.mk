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
