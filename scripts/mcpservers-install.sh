#!/usr/bin/env bash
# Installs the published MCP servers of the e2e suite (e2e/mcpservers) with
# npm ci, unless node_modules was already installed from the same lockfile
# (its hash is kept beside the packages).
set -euo pipefail
dir="$(cd "$(dirname "$0")/../e2e/mcpservers" && pwd)"
want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
stamp="$dir/node_modules/.guilds-lock-sha256"
if [ "$(cat "$stamp" 2>/dev/null || true)" = "$want" ]; then
	exit 0
fi
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$want" >"$stamp"
