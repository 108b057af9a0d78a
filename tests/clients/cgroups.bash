# Cgroup folders that a client makes under every hierarchy's root (podman's
# libpod_parent, containerd's /<namespace>) outlive their containers. A test
# file notes which did not exist before it started and removes those (when
# empty: rmdir never removes a cgroup that still has processes) at the end.

cgroup_dirs_of() {
  local name=$1 d
  for d in /sys/fs/cgroup/*/"$name" /sys/fs/cgroup/"$name"; do
    [ -d "$d" ] && echo "$d"
  done
}

# cgroup_note_absent NAME FILE: remember in FILE that NAME did not exist.
cgroup_note_absent() {
  [ -n "$(cgroup_dirs_of "$1")" ] || echo "$1" >>"$2"
}

# cgroup_remove_noted FILE: rmdir, deepest first, the cgroups noted in FILE.
cgroup_remove_noted() {
  local file=$1 name d
  [ -f "$file" ] || return 0
  while read -r name; do
    for d in $(cgroup_dirs_of "$name"); do
      find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
  done <"$file"
}
