#!/bin/sh
# oci-image.sh ROOTFS NAME OUT.tar: pack a root filesystem as a one-layer OCI
# image archive (oci-layout, index.json, blobs/sha256) that `ctr images
# import` and `podman load` accept, named NAME. No registry, no daemon.
# A fourth argument, a JSON array, is the image's Cmd (default ["sh"]).
set -eu
rootfs=$1 name=$2 out=$3 cmd=${4:-'["sh"]'}
work=$(mktemp -d "${TMPDIR:-/tmp}/oci-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blobs/sha256"

case $(uname -m) in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac

# put FILE into blobs/ under its digest; print the digest
blob() {
  d=$(sha256sum "$1" | cut -d' ' -f1)
  mv "$1" "$work/blobs/sha256/$d"
  echo "$d"
}
size() { stat -c %s "$work/blobs/sha256/$1"; }

tar -C "$rootfs" --numeric-owner -cf "$work/layer" .
layer=$(blob "$work/layer")

jq -n --arg arch "$arch" --arg diff "sha256:$layer" --argjson cmd "$cmd" '{
  architecture: $arch, os: "linux",
  config: { Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], Cmd: $cmd },
  rootfs: { type: "layers", diff_ids: [$diff] } }' >"$work/config"
config=$(blob "$work/config")

jq -n --arg c "sha256:$config" --argjson cs "$(size "$config")" \
  --arg l "sha256:$layer" --argjson ls "$(size "$layer")" '{
  schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs },
  layers: [ { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls } ] }' >"$work/manifest"
manifest=$(blob "$work/manifest")

jq -n --arg m "sha256:$manifest" --argjson ms "$(size "$manifest")" --arg name "$name" --arg arch "$arch" '{
  schemaVersion: 2,
  manifests: [ { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
                 platform: { architecture: $arch, os: "linux" },
                 annotations: { "io.containerd.image.name": $name,
                                "org.opencontainers.image.ref.name": ($name | sub(".*:"; "")) } } ] }' >"$work/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$work/oci-layout"
tar -C "$work" -cf "$out" oci-layout index.json blobs
