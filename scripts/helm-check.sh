#!/usr/bin/env bash
# Checks the Helm chart in deploy/helm/guilds offline (make helm-check):
#   1. the manifest validator's own tests (tools/helm/kubecheck);
#   2. helm lint --strict with the default values and with each file in ci/;
#   3. helm template of each value set, validated by kubecheck: every document
#      decoded strictly into its typed Kubernetes object, plus the basics;
#   4. the values schema refuses a misspelt key and a value of the wrong type.
#   5. the defaults give no credential; every guilds pod is locked down;
#   6. with GUILDS set (make helm-check sets .bin/guilds), that binary accepts
#      the environment each of its containers gets.
# HELM names the helm binary (default .bin/helm, built by `make .bin/helm`).
set -euo pipefail
cd "$(dirname "$0")/.."
HELM=${HELM:-.bin/helm}
GO=${GO:-go}
chart=deploy/helm/guilds
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Helm keeps no state of ours: no repositories, no cache, no plugins.
export HELM_CACHE_HOME=$work/cache HELM_CONFIG_HOME=$work/config HELM_DATA_HOME=$work/data

# Lint and render for the Kubernetes version whose API types kubecheck
# decodes into (k8s.io/api v0.N.x is Kubernetes 1.N): a Helm built from source
# would otherwise assume 1.20.
kube_minor=$(cd tools/helm && $GO list -m -f '{{.Version}}' k8s.io/api | cut -d. -f2)
kube="--kube-version=1.$kube_minor.0"

echo "== kubecheck tests"
(cd tools/helm && $GO test -count=1 ./kubecheck/)
(cd tools/helm && $GO build -o "$work/kubecheck" ./kubecheck)

# name, values file ("" = the defaults), the objects it must render.
sets=(
	"default||Deployment=2,Service=1,ConfigMap=1,Secret=1,Job=1,Ingress=0,PodDisruptionBudget=0"
	"all|$chart/ci/all-values.yaml|Deployment=3,Service=2,ConfigMap=1,Secret=2,Job=1,Ingress=1,PodDisruptionBudget=2"
	"external|$chart/ci/external-values.yaml|Deployment=2,Service=1,ConfigMap=1,Secret=0,Job=1,Ingress=0,PodDisruptionBudget=0"
)
for s in "${sets[@]}"; do
	IFS='|' read -r name file expect <<<"$s"
	args=()
	[ -n "$file" ] && args=(-f "$file")
	echo "== $name values: lint, template, kubecheck"
	"$HELM" lint --strict "$kube" "$chart" "${args[@]}"
	"$HELM" template guilds "$chart" "$kube" --namespace guilds "${args[@]}" >"$work/$name.yaml"
	"$work/kubecheck" -expect "$expect" "$work/$name.yaml"
	# Migrations run before any new pod: the Job is a pre-install/pre-upgrade hook.
	grep -q 'helm.sh/hook: pre-install,pre-upgrade' "$work/$name.yaml" ||
		{ echo "helm-check: $name: the migration Job is not a pre-install/pre-upgrade hook" >&2; exit 1; }
done

# The defaults carry no credential, and every guilds container runs locked down.
mapfile -d '' envs < <("$work/kubecheck" -env Deployment/guilds-api/api "$work/default.yaml")
for kv in "${envs[@]}"; do
	case ${kv%%=*} in DATABASE_URL | REDIS_URL | GUILDS_ENCRYPTION_KEY | *_KEY | *_SECRET | *_TOKEN | *_PASSWORD | *_DSN)
		echo "helm-check: the default values give the API a credential: ${kv%%=*}" >&2
		exit 1
		;;
	esac
done
for f in "$work"/{default,all,external}.yaml; do
	n=$(grep -c 'image: ".*guilds:' "$f")
	for want in 'readOnlyRootFilesystem: true' 'allowPrivilegeEscalation: false' 'runAsNonRoot: true' 'automountServiceAccountToken: false'; do
		[ "$(grep -c "$want" "$f")" -ge "$n" ] ||
			{ echo "helm-check: $f: fewer than $n guilds pods or containers with $want" >&2; exit 1; }
	done
done

# The binary itself reads the configuration the chart renders: each process
# of the every-option set starts with exactly its container's environment and
# must get past the configuration (exit 2 is a refused setting) to the first
# dial, PostgreSQL on a closed loopback port (exit 1, "not reachable").
if [ -n "${GUILDS:-}" ]; then
	echo "== the guilds binary accepts the rendered environment"
	for proc in "Deployment/guilds-all-api/api serve" "Deployment/guilds-all-worker/worker worker" "Job/guilds-all-migrate/migrate migrate up"; do
		read -r ref cmd <<<"$proc"
		mapfile -d '' envs < <("$work/kubecheck" -env "$ref" "$work/all.yaml")
		[ ${#envs[@]} -gt 5 ] || { echo "helm-check: no environment for $ref" >&2; exit 1; }
		set +e
		# shellcheck disable=SC2086 # cmd is the subcommand and its argument
		env -i PATH=/usr/bin:/bin "${envs[@]}" DATABASE_URL='postgres://guilds@127.0.0.1:1/guilds?sslmode=disable&connect_timeout=5' \
			timeout 60 "$GUILDS" $cmd >"$work/out" 2>&1
		code=$?
		set -e
		if [ $code -ne 1 ] || ! grep -q 'PostgreSQL at .* is not reachable' "$work/out"; then
			echo "helm-check: guilds $cmd with the environment of $ref: exit $code, want 1 at the database dial:" >&2
			cat "$work/out" >&2
			exit 1
		fi
		echo "guilds $cmd: ${#envs[@]} variables accepted"
	done
fi

echo "== the values schema is in force"
refuse() {
	local why=$1
	shift
	if "$HELM" template guilds "$chart" "$kube" "$@" >/dev/null 2>"$work/refused"; then
		echo "helm-check: the chart accepted $why ($*)" >&2
		exit 1
	fi
	grep -q 'values don.t meet the specifications of the schema' "$work/refused" ||
		{ echo "helm-check: $why failed for another reason than the schema:" >&2; cat "$work/refused" >&2; exit 1; }
}
refuse "a misspelt key" --set api.replica=3
refuse "a string for a number" --set-string worker.replicas=two
refuse "an unknown codec" --set config.temporalCodec=aes
refuse "an address without a port" --set temporal.address=temporal.example.com
echo "helm-check: ok"
