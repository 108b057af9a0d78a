#!/usr/bin/env bats
# agentrun sandbox: which host folders may be bound, and the credentials
# hidden under every home. /proc, /sys and /dev are never bound; system
# folders and the caller's home are read-write only with --allow-system-path
# and --allow-home. Run as root, the agent runs as nobody (65534).
# Everything lives under $BATS_TEST_TMPDIR, with a fake home.

load helpers

setup() { sandbox_setup "the agent runs as nobody"; }

teardown() { sandbox_teardown; }

# without the helpers' --workspace: each test says what it binds
sb() { env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox "$@"; }

# Files a person's tools keep logins, tokens and histories in.
CRED_FILES=(.git-credentials .config/git/credentials .config/gh/hosts.yml .config/hub .npmrc .pypirc
  .cargo/credentials .cargo/credentials.toml .terraform.d/credentials.tfrc.json .vault-token
  .docker/config.json .config/containers/auth.json .local/share/keyrings/login.keyring .pgpass
  .bash_history .zsh_history .python_history)

plant_creds() {
  local f
  for f in "${CRED_FILES[@]}"; do
    mkdir -p "$FHOME/$(dirname "$f")"
    echo "SECRET-$f" >"$FHOME/$f"
  done
  echo visible >"$FHOME/notes.txt"
  chown -R "$AGENT_UID:$AGENT_UID" "$FHOME"
}

# What the agent can read of them, one line per file that gave anything.
READ_CREDS='for f in '"${CRED_FILES[*]}"'; do cat "$HOME/$f" 2>/dev/null; done; cat "$HOME/notes.txt"'

@test "places: credentials and histories are hidden under a --ro home" {
  plant_creds
  run sb --workspace "$WS" --ro "$FHOME" -- sh -c "$READ_CREDS"
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx visible
  ! echo "$output" | grep -q SECRET
}

@test "places: the home as the workspace is refused, unless --allow-home; credentials stay hidden then" {
  plant_creds
  # run from the home, as a person would, or naming it, or a folder holding it
  run sh -c "cd '$FHOME' && exec env -u SUDO_UID -u SUDO_GID HOME='$FHOME' '$AGENTRUN' --root '$ROOT' sandbox -- true"
  [ "$status" -eq 125 ]
  [[ "$output" == *"--workspace $FHOME: holds the home folder $FHOME"*"--allow-home"* ]]
  run sb --workspace "$T" -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--workspace $T: holds the home folder $FHOME"* ]]
  run sb --workspace "$WS" --rw "$FHOME" -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--rw $FHOME"*"--allow-home"* ]]
  run sb --workspace "$WS" --out "$FHOME" -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--out $FHOME"* ]]
  [ -z "$(ls "$ROOT" 2>/dev/null)" ]
  # on purpose: the home is the workspace, and the masks still hold
  run sb --workspace "$FHOME" --allow-home -- sh -c "$READ_CREDS; echo made >\$HOME/made"
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx visible
  refute grep -q SECRET <<<"$output"
  [ "$(cat "$FHOME/made")" = made ]
  # and read-only it needs nothing
  run sb --workspace "$WS" --ro "$FHOME" -- true
  [ "$status" -eq 0 ]
}

@test "places: /proc, /sys and /dev and what is below them are never bound" {
  local opt p
  for p in /proc /proc/1 /proc/self/fd /sys /sys/kernel /dev /dev/shm; do
    for opt in --ro --rw --workspace --out; do
      run sb --allow-system-path --allow-home --workspace "$WS" "$opt" "$p" -- true
      [ "$status" -eq 125 ]
      [[ "$output" == *"never bound into the sandbox"* ]] || { echo "$opt $p: $output"; false; }
    done
  done
  [ -z "$(ls "$ROOT" 2>/dev/null)" ]
}

@test "places: system folders are not read-write without --allow-system-path; read-only they are fine" {
  local opt p
  for p in /etc /usr /var /tmp /home /run /root /boot /opt /var/tmp; do
    [ -d "$p" ] || continue
    for opt in --workspace --out --rw; do
      run sb --workspace "$WS" "$opt" "$p" -- true
      [ "$status" -eq 125 ]
      [[ "$output" == *"$opt $p: a system folder of the host"*"--allow-system-path"* ]] || { echo "$output"; false; }
    done
  done
  run sb --workspace "$WS" --ro /var --ro /home -- true
  [ "$status" -eq 0 ]
  # a folder of one's own is the person's choice, and the flag says it on purpose
  mkdir "$T/cache"
  run sb --workspace "$WS" --rw "$T/cache" -- true
  [ "$status" -eq 0 ]
  run sb --allow-system-path --workspace /var -- pwd
  [ "$status" -eq 0 ]
  [ "$output" = /var ]
}

@test "places: agentrun's state folder is never writable inside: a filter planted in its cache would be the next run's" {
  # a first run makes the state folder and its compiled-filter cache
  run sb --workspace "$WS" -- true
  [ "$status" -eq 0 ]
  [ -d "$ROOT/.seccomp-cache" ]
  local opt p
  for p in "$ROOT" "$ROOT/.seccomp-cache" "$T"; do
    for opt in --rw --out --workspace; do
      if [ "$opt" = --workspace ]; then
        run sb --allow-home --workspace "$p" -- true
      else
        run sb --allow-home --workspace "$WS" "$opt" "$p" -- true
      fi
      [ "$status" -eq 125 ]
      [[ "$output" == *"$opt $p: $ROOT is agentrun's state folder"*"never bound read-write"* ]] || { echo "$output"; false; }
    done
  done
  # nothing of a refused run is left in the workspace
  [ -z "$(ls -A "$WS")" ]
  # read-only, and a folder beside it, are fine
  mkdir "$T/beside"
  run sb --workspace "$WS" --ro "$ROOT" --rw "$T/beside" -- true
  [ "$status" -eq 0 ]
}

@test "places: the agent bundle masks what the default bundle masks, and makes the same read-only" {
  (cd "$WS" && env -u SUDO_UID HOME="$FHOME" "$AGENTRUN" spec --agent --bundle "$T/agent" -- true)
  (mkdir -p "$T/plain" && cd "$T/plain" && "$AGENTRUN" spec)
  run jq -n --slurpfile a "$T/agent/config.json" --slurpfile p "$T/plain/config.json" \
    '($p[0].linux.maskedPaths - $a[0].linux.maskedPaths), ($p[0].linux.readonlyPaths - $a[0].linux.readonlyPaths)'
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -c .)" = "$(printf '[]\n[]')" ]
  jq -e --arg h "$FHOME/.git-credentials" '.linux.maskedPaths | index($h)' "$T/agent/config.json"
}

@test "places: a home the sandbox writes (--allow-home, --home DIR): no rename of a folder above a mask frees the secret for the next run" {
  plant_creds
  # every folder above a nested mask, renamed by run 1, read back by run 2
  local mv_all='for d in .config .cargo .terraform.d .local .local/share; do mv "$HOME/$d" "$HOME/$d.moved" 2>/dev/null && echo "moved $d"; done; true'
  local read_moved='for f in .config.moved/gh/hosts.yml .config.moved/git/credentials .cargo.moved/credentials .terraform.d.moved/credentials.tfrc.json .local.moved/share/keyrings/login.keyring .local/share.moved/keyrings/login.keyring .config.moved/containers/auth.json; do cat "$HOME/$f" 2>/dev/null; done; true'
  run sb --workspace "$FHOME" --allow-home -- sh -c "$mv_all"
  echo "$output"
  [ "$status" -eq 0 ]
  refute grep -q moved <<<"$output"
  run sb --workspace "$FHOME" --allow-home -- sh -c "$read_moved; $READ_CREDS"
  [ "$status" -eq 0 ]
  refute grep -q SECRET <<<"$output"
  # the same in a home of the agent's own that holds them
  mkdir -p "$T/agenthome"
  cp -a "$FHOME/." "$T/agenthome/"
  run sb --workspace "$WS" --home "$T/agenthome" -- sh -c "$mv_all"
  [ "$status" -eq 0 ]
  refute grep -q moved <<<"$output"
  run sb --workspace "$WS" --home "$T/agenthome" -- sh -c "$read_moved; $READ_CREDS"
  [ "$status" -eq 0 ]
  refute grep -q SECRET <<<"$output"
  # the folders are still writable, each mask still in place
  run sb --workspace "$FHOME" --allow-home -- sh -c 'touch "$HOME/.config/new" && echo config-writable'
  echo "$output" | grep -qx config-writable
}

@test "places: a hidden folder of the home (configs, caches, programs the host runs) is not read-write without --allow-home" {
  mkdir -p "$FHOME/.config/nvim" "$FHOME/.cache/pip" "$FHOME/.local/bin"
  chown -R "$AGENT_UID:$AGENT_UID" "$FHOME"
  local opt p
  for p in "$FHOME/.config/nvim" "$FHOME/.cache/pip" "$FHOME/.local/bin"; do
    for opt in --workspace --out --rw; do
      run sb --workspace "$WS" "$opt" "$p" -- true
      [ "$status" -eq 125 ]
      [[ "$output" == *"$opt $p: in a hidden folder of the home $FHOME"*"--allow-home"* ]] || { echo "$output"; false; }
    done
  done
  # read-only, on purpose, the agent's own home there, or a folder of the home that is not hidden: fine
  run sb --workspace "$WS" --ro "$FHOME/.config" -- true
  [ "$status" -eq 0 ]
  run sb --workspace "$WS" --rw "$FHOME/.cache/pip" --allow-home -- true
  [ "$status" -eq 0 ]
  run sb --workspace "$WS" --home "$FHOME/.sandbox-home" -- true
  [ "$status" -eq 0 ]
  mkdir "$FHOME/proj" && chown "$AGENT_UID" "$FHOME/proj"
  run sb --workspace "$FHOME/proj" -- true
  [ "$status" -eq 0 ]
}
