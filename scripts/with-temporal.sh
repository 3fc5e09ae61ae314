#!/usr/bin/env bash
# Usage: with-temporal.sh TEMPORAL_CLI PORT COMMAND...
# Runs COMMAND with TEMPORAL_ADDRESS pointing at a Temporal dev server. An address
# already set is used as it is; otherwise an in-memory dev server is started on
# PORT for the duration of the command.
set -euo pipefail
cli=$1 port=$2
shift 2
if [[ -n "${TEMPORAL_ADDRESS:-}" ]]; then
  exec "$@"
fi
attrs=()
for sa in GuildsOrganisation GuildsGuild GuildsAgent GuildsTrigger; do attrs+=(--search-attribute "$sa=Keyword"); done
log=$(mktemp -t temporal-test.XXXXXX.log)
# Fairness on, as guilds dev runs it (docs/adr/0519-fairness-between-organisations.md).
"$cli" server start-dev --headless --ip 127.0.0.1 --port "$port" --log-level warn "${attrs[@]}" \
  --dynamic-config-value matching.enableFairness=true >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  if "$cli" operator cluster health --address "127.0.0.1:$port" >/dev/null 2>&1; then break; fi
  if ! kill -0 $pid 2>/dev/null; then echo "temporal dev server failed to start:"; cat "$log"; exit 1; fi
  sleep 0.5
done
export TEMPORAL_ADDRESS="127.0.0.1:$port"
"$@"
