#!/usr/bin/env bash
# Build the agent sandbox image without a registry: the root filesystem of
# deploy/sandbox/Dockerfile made from Debian packages with mmdebstrap, the
# ast-grep binary from its npm package, the helpers built here, all imported
# into Podman as guilds-sandbox:<input hash> and guilds-sandbox:latest.
#
#   scripts/sandbox-image.sh            # or: make sandbox-image
#
# Two levels of cache, so the usual case (only the helpers changed) is quick:
#   - the base root filesystem (Debian + the agent user + ast-grep) is a tar
#     under $GUILDS_SANDBOX_CACHE, keyed by the hash of the package list,
#     the ast-grep version and step 4 of this script (its recipe);
#   - the image is labelled guilds.sandbox-inputs=<hash of everything,
#     helper binaries included>; when one with that label exists, nothing
#     is rebuilt.
# Needs root (mmdebstrap, podman). Environment:
#   GUILDS_SANDBOX_CACHE  cache folder (default $GUILDS_DATA_DIR/cache/sandbox-image,
#                         GUILDS_DATA_DIR defaulting to .data)
#   SANDBOX_IMAGE_REPO    image name (default guilds-sandbox)
set -euo pipefail
SCRIPT="$(realpath "$0")"
cd "$(dirname "$SCRIPT")/.."

REPO_NAME="${SANDBOX_IMAGE_REPO:-guilds-sandbox}"
CACHE="${GUILDS_SANDBOX_CACHE:-${GUILDS_DATA_DIR:-.data}/cache/sandbox-image}"
DEF=deploy/sandbox
start=$(date +%s)

log() { echo "sandbox-image: $*" >&2; }
sha() { sha256sum | cut -c1-64; }

mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
# One build at a time per cache (make test and a developer may race).
exec 9>"$CACHE/.lock"
flock 9

# 1. Tools, only the missing ones.
missing=()
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
command -v npm >/dev/null || missing+=(npm)
command -v flock >/dev/null || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v podman >/dev/null || scripts/podman-up.sh
export PATH="/usr/local/go/bin:$PATH"

# 2. The inputs, read from the image definition.
packages="$(grep -vE '^\s*(#|$)' "$DEF/packages.txt" | tr -s ' \n' ' ')"
ast_grep_version="$(sed -nE 's/^ARG AST_GREP_VERSION=([0-9.]+)$/\1/p' "$DEF/Dockerfile")"
[ -n "$ast_grep_version" ] || { log "no ARG AST_GREP_VERSION=<version> in $DEF/Dockerfile"; exit 1; }
# Only the recipe of step 4 keys the base, so a change to the helpers or the
# labels (steps 3 and 5) does not rebuild Debian.
base_recipe="$(sed -n '/^# 4\. The base root filesystem/,/^# 5\. The image/p' "$SCRIPT")"
[ -n "$base_recipe" ] || { log "step 4 of $SCRIPT not found"; exit 1; }
base_hash="$( { echo "$packages"; echo "ast-grep $ast_grep_version"; echo "$base_recipe"; } | sha)"

# 3. The helpers. Building is cheap when nothing changed (the Go build
#    cache), and the binary's hash stands for all of its sources.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/add/usr/local/bin"
helpers=(guilds-code guilds-browser guilds-script-run guilds-git-credential guilds-sandboxd)
for h in "${helpers[@]}"; do
  if go list -f '{{.Name}}' "./cmd/$h" 2>/dev/null | grep -qx main; then
    log "building $h"
    CGO_ENABLED=1 go build -trimpath -buildvcs=false -o "$work/add/usr/local/bin/$h" "./cmd/$h"
  else
    log "WARNING: ./cmd/$h is not a main package yet: the image is built without it"
  fi
done
# The system git configuration: GitHub's credentials come from the
# platform's helper (useHttpPath: the token of the repository git talks to).
mkdir -p "$work/add/etc"
printf '[credential "https://github.com"]\n\thelper =\n\thelper = /usr/local/bin/guilds-git-credential\n\tuseHttpPath = true\n' \
  >"$work/add/etc/gitconfig"
helpers_hash="$(cd "$work/add" && find usr etc -type f | sort | xargs -r sha256sum | sha)"
inputs="$(printf '%s\n%s\n' "$base_hash" "$helpers_hash" | sha)"
tag="$REPO_NAME:${inputs:0:16}"

have="$(podman image inspect --format '{{index .Config.Labels "guilds.sandbox-inputs"}}' "$tag" 2>/dev/null || true)"
if [ "$have" = "$inputs" ]; then
  podman tag "$tag" "$REPO_NAME:latest"
  log "up to date: $tag (= $REPO_NAME:latest), $(( $(date +%s) - start )) s"
  exit 0
fi

# 4. The base root filesystem, from the cache or built once.
base="$CACHE/base-${base_hash:0:16}.tar"
if [ ! -f "$base" ]; then
  log "building the base root filesystem (Debian bookworm; takes a few minutes)"
  npm_dir="$CACHE/npm-ast-grep-$ast_grep_version"
  sg="$npm_dir/node_modules/@ast-grep/cli-linux-x64-gnu/ast-grep"
  if [ ! -x "$sg" ]; then
    npm install --prefix "$npm_dir" --no-save --no-audit --no-fund --ignore-scripts \
      "@ast-grep/cli-linux-x64-gnu@$ast_grep_version" >&2
  fi
  "$sg" --version >&2
  # The host's own apt sources (Debian 12 like the image), so the image uses
  # the mirror (or snapshot) this machine is set up with.
  mirrors=()
  for s in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
    [ -s "$s" ] && grep -qE '^\s*(deb |Types:)' "$s" && grep -q 'debian' "$s" && mirrors+=("$s")
  done
  # shellcheck disable=SC2086 # the package list is words on purpose
  mmdebstrap --variant=apt --format=tar --include="$(echo $packages | tr ' ' ',')" \
    --customize-hook='chroot "$1" useradd --create-home --uid 1000 --user-group --shell /bin/bash agent' \
    --customize-hook='chmod 0755 "$1/home/agent"; install -d -m 1777 "$1/run/guilds"' \
    --customize-hook="install -m 0755 '$sg' \"\$1/usr/local/bin/ast-grep\"; ln -s ast-grep \"\$1/usr/local/bin/sg\"" \
    --customize-hook='rm -rf "$1/var/cache/apt/"*.bin "$1/var/log/"*.log' \
    bookworm "$work/base.tar" "${mirrors[@]}" >&2
  mv "$work/base.tar" "$base"
  # Older bases are of no further use.
  find "$CACHE" -maxdepth 1 -name 'base-*.tar' ! -name "$(basename "$base")" -delete
  log "base root filesystem cached: $base ($(du -h "$base" | cut -f1)), $(( $(date +%s) - start )) s"
fi

# 5. The image: the base imported once into the engine's store, then the
#    helpers copied on top as one small layer (under a second; importing
#    the whole tar again takes some twenty).
base_image="$REPO_NAME-base:${base_hash:0:16}"
if ! podman image exists "$base_image"; then
  log "importing the base root filesystem as $base_image"
  podman import "$base" "$base_image" >/dev/null
  for o in $(podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$REPO_NAME-base"); do
    [ "${o#localhost/}" = "$base_image" ] || podman rmi "$o" >/dev/null 2>&1 || true
  done
fi
cat >"$work/add/Containerfile" <<EOF
FROM localhost/$base_image
COPY usr/ /usr/
COPY etc/gitconfig /etc/gitconfig
USER agent
WORKDIR /home/agent
ENV HOME=/home/agent PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
LABEL guilds.sandbox-inputs=$inputs
LABEL guilds.sandboxd=/usr/local/bin/guilds-sandboxd
CMD ["/bin/bash"]
EOF
old="$(podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$REPO_NAME" | grep -v ':latest$' || true)"
podman build --pull=never -q -t "$tag" "$work/add" >/dev/null
podman tag "$tag" "$REPO_NAME:latest"
for o in $old; do
  [ "${o#localhost/}" = "$tag" ] || podman rmi "$o" >/dev/null 2>&1 || true
done
log "built $tag (= $REPO_NAME:latest), $(( $(date +%s) - start )) s"
