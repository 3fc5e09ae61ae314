#!/usr/bin/env bash
set -euo pipefail

OUT_DIR="${OUT_DIR:-dist}"

log() {
	echo "build: $*" >&2
}

function compile {
	log "compiling $1"
	mkdir -p "$OUT_DIR"
}

main() {
	compile app
	log done
}

main "$@"
