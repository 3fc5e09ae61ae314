#!/usr/bin/env bash
# Usage: temporal-postgres.sh schema DB | start DB PORT
# Temporal's own server on this machine's PostgreSQL, the production shape
# (docs/scaling.md). `schema` creates DB and DB_visibility and brings both to
# the pinned server's schema (idempotent); `start` runs the server in the
# foreground with frontend gRPC on PORT and its other services on PORT+3..8.
# TEMPORAL_PG_ADDR (127.0.0.1:5432) and TEMPORAL_PG_USER (postgres) say where.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/.bin
addr=${TEMPORAL_PG_ADDR:-127.0.0.1:5432}
user=${TEMPORAL_PG_USER:-postgres}
cmd=$1 db=$2

case $cmd in
schema)
  schema=$(cd "$root/tools/temporalserver" && /usr/local/go/bin/go list -m -f '{{.Dir}}' go.temporal.io/server)/schema/postgresql/v12
  sql() { "$bin/temporal-sql-tool" --plugin postgres12 --ep "${addr%:*}" -p "${addr##*:}" -u "$user" --db "$1" "${@:2}"; }
  for d in "$db:temporal" "${db}_visibility:visibility"; do
    name=${d%%:*} dir=${d##*:}
    sql "$name" create-database >/dev/null 2>&1 || true # already there
    # setup-schema refuses a database that has one; update-schema then only
    # applies the versions it lacks.
    sql "$name" setup-schema -v 0.0 >/dev/null 2>&1 || true
    if ! out=$(sql "$name" update-schema -d "$schema/$dir/versioned" 2>&1); then
      echo "$out" >&2
      exit 1
    fi
  done
  ;;
start)
  export TEMPORAL_PG_DB=$db TEMPORAL_PORT=$3 TEMPORAL_PG_ADDR=$addr TEMPORAL_PG_USER=$user
  export TEMPORAL_DYNAMIC_CONFIG=$root/deploy/temporal-dynamicconfig.yaml
  exec "$bin/temporal-server" --root "$root" --config deploy/temporal-postgres --env production --allow-no-auth start
  ;;
*)
  echo "usage: $0 schema DB | start DB PORT" >&2
  exit 2
  ;;
esac
