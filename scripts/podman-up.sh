#!/usr/bin/env bash
# Bring up a Docker-compatible Engine API (Podman) and the tiny test image the
# sandbox/docker tests run against. Safe to run again: each step only does what
# is missing. Needs root (apt-get, /etc/containers).
#
#   scripts/podman-up.sh            # then: export DOCKER_HOST=unix:///tmp/podman.sock
#
# Environment: PODMAN_SOCK (default /tmp/podman.sock),
#              SANDBOX_TEST_IMAGE (default guilds-sandbox-test:latest).
set -euo pipefail

SOCK="${PODMAN_SOCK:-/tmp/podman.sock}"
IMAGE="${SANDBOX_TEST_IMAGE:-guilds-sandbox-test:latest}"
CONF=/etc/containers/containers.conf

log() { echo "podman-up: $*" >&2; }

# 1. Packages, only the missing ones.
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx setsid || missing+=(busybox-static)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. Engine configuration: crun does not work on this machine kind, runc does;
#    the default ulimits cannot be applied inside an unprivileged CI container.
if [ ! -f "$CONF" ]; then
  log "writing $CONF"
  mkdir -p "$(dirname "$CONF")"
  printf '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\n' >"$CONF"
fi

# 3. The API service, unless the socket already answers.
ping() {
  if command -v curl >/dev/null; then
    curl -fsS --max-time 2 --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1
  else
    timeout 5 podman --url "unix://$SOCK" version >/dev/null 2>&1
  fi
}
if ! ping; then
  log "starting podman system service on unix://$SOCK"
  rm -f "$SOCK"
  # From /: the service and the containers it starts keep this directory as theirs.
  (cd / && nohup podman system service --time=0 "unix://$SOCK" >/tmp/podman-service.log 2>&1 &)
  for _ in $(seq 1 50); do ping && break; sleep 0.2; done
  ping || { log "the service did not answer; see /tmp/podman-service.log"; exit 1; }
fi

# 4. The test image: busybox alone, imported from a rootfs tar (no registry needed).
#    Bump REVISION when the image's content changes, so an old import is replaced.
REVISION=2
have="$(podman image inspect --format '{{index .Config.Labels "guilds.test-image"}}' "$IMAGE" 2>/dev/null || true)"
if [ "$have" != "$REVISION" ]; then
  log "importing $IMAGE (revision $REVISION)"
  root="$(mktemp -d)"
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,home/agent,run/guilds,tmp,proc,sys,dev}
  cp /bin/busybox "$root/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/home/agent:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\nagent:x:1000:\n' >"$root/etc/group"
  # Podman gives a tmpfs mount the mode of the image's directory: these
  # must be writable by any sandbox user (root has no DAC override there).
  chmod 1777 "$root/home/agent" "$root/run/guilds" "$root/tmp"
  tar -C "$root" -c . | podman import \
    --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "LABEL guilds.test-image=$REVISION" - "$IMAGE" >/dev/null
fi
log "ready: DOCKER_HOST=unix://$SOCK image=$IMAGE"
