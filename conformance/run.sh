#!/usr/bin/env bash
# Runs the MCP conformance suite (client mode) against cmd/mcpclient, which
# drives the platform's own session pool and connector engine. Needs Node 20+,
# Go, and PostgreSQL at DATABASE_URL's server (default local); the client keeps
# its rows in a scratch database, guilds_conformance. Only loopback traffic,
# apart from the npm install. Results land in conformance/results/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$here"

if [ -d node_modules/@modelcontextprotocol/conformance ]; then :; else
	npm ci --no-audit --no-fund --loglevel=error
fi
(cd "$root" && go build -o .bin/mcpclient ./cmd/mcpclient)

# Every scenario of the authorization-code flow; the client_credentials ones
# (auth/client-credentials-*) are a different grant and not run.
scenarios=(initialize tools_call sse-retry)
while read -r s; do
	case "$s" in
	auth/client-credentials-*) ;;
	auth/*) scenarios+=("$s") ;;
	esac
done < <(npx --no-install conformance list --client | sed -n 's/^  - //p')

cmd="$root/.bin/mcpclient -client-metadata-url https://conformance-test.local/client-metadata.json"
out="$here/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
failed=()
start=$SECONDS
for s in "${scenarios[@]}"; do
	log="$out/$(echo "$s" | tr / _).log"
	if npx --no-install conformance client --command "$cmd" --scenario "$s" --output-dir "$out" \
		--expected-failures "$here/expected-failures.yml" >"$log" 2>&1; then
		status=pass
		grep -q 'Expected failures (in baseline)' "$log" && status=expected
	else
		status=FAIL
		failed+=("$s")
	fi
	printf '%-45s %-8s %s\n' "$s" "$status" "$(grep -m1 -o 'Passed: .*' "$log" || echo 'no result')"
done
echo "${#scenarios[@]} scenarios in $((SECONDS - start))s; logs and checks.json under $out"
echo "expected = fails for a reason listed in conformance/expected-failures.yml"
if [ ${#failed[@]} -gt 0 ]; then
	echo "failed: ${failed[*]}" >&2
	exit 1
fi
