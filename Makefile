# guilds — run `make help` for the list of targets.
SHELL := /bin/bash
GO    ?= go
BIN   := .bin
TEMPORAL_CLI := $(BIN)/temporal
GOLANGCI_LINT := $(BIN)/golangci-lint
WORKFLOWCHECK := $(BIN)/workflowcheck
TEMPORAL_SERVER := $(BIN)/temporal-server
HELM := $(BIN)/helm
GOPLS := $(BIN)/gopls
# Integration tests share one Temporal dev server started by `make test`.
TEST_TEMPORAL_PORT ?= 7299
GOTEST_FLAGS ?= -race -timeout 25m

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(TEMPORAL_CLI): tools/temporal/go.mod tools/temporal/go.sum
	@mkdir -p $(BIN)
	@echo "building the Temporal CLI (pinned in tools/temporal; the first build takes several minutes)"
	cd tools/temporal && $(GO) build -o ../../$(TEMPORAL_CLI) github.com/temporalio/cli/cmd/temporal

.PHONY: temporal
temporal: $(TEMPORAL_CLI) ## Build the pinned Temporal CLI (dev server) into .bin/

# Temporal's own server and its SQL schema tool, for the production shape on
# PostgreSQL (scripts/temporal-postgres.sh). Same server version as the CLI's, so
# the build cache the CLI's build left does most of the work.
$(TEMPORAL_SERVER): tools/temporalserver/go.mod tools/temporalserver/go.sum
	@mkdir -p $(BIN)
	@echo "building Temporal's server and SQL tool (pinned in tools/temporalserver)"
	cd tools/temporalserver && $(GO) build -o ../../$(BIN)/temporal-sql-tool go.temporal.io/server/cmd/tools/sql
	cd tools/temporalserver && $(GO) build -o ../../$(TEMPORAL_SERVER) go.temporal.io/server/cmd/server

.PHONY: temporal-server
temporal-server: $(TEMPORAL_SERVER) ## Build Temporal's server and SQL tool into .bin/ (the production shape)

$(GOLANGCI_LINT): tools/lint/go.mod tools/lint/go.sum
	@mkdir -p $(BIN)
	@echo "building golangci-lint (pinned in tools/lint)"
	cd tools/lint && $(GO) build -o ../../$(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

$(WORKFLOWCHECK): tools/lint/go.mod tools/lint/go.sum
	@mkdir -p $(BIN)
	@echo "building workflowcheck (pinned in tools/lint)"
	cd tools/lint && $(GO) build -o ../../$(WORKFLOWCHECK) go.temporal.io/sdk/contrib/tools/workflowcheck

$(HELM): tools/helm/go.mod tools/helm/go.sum
	@mkdir -p $(BIN)
	@echo "building helm (pinned in tools/helm; the first build takes a few minutes)"
	cd tools/helm && $(GO) build -o ../../$(HELM) helm.sh/helm/v3/cmd/helm

.PHONY: helm-check
helm-check: $(HELM) build ## Lint and render the Helm chart (deploy/helm/guilds), validate the manifests offline (tools/helm/kubecheck), start guilds with their environment
	HELM=$(HELM) GO=$(GO) GUILDS=$(BIN)/guilds scripts/helm-check.sh

.PHONY: lint
lint: $(GOLANGCI_LINT) $(WORKFLOWCHECK) ## Run golangci-lint (.golangci.yml) and Temporal's workflowcheck on the workflows
	$(GOLANGCI_LINT) run --allow-parallel-runners ./...
	$(WORKFLOWCHECK) -config tools/lint/workflowcheck.yaml ./workflows/...

.PHONY: build
build: ## Build the guilds binary into .bin/
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/guilds ./cmd/guilds

.PHONY: run
run: build temporal ## Run the whole platform on development defaults (guilds dev)
	$(BIN)/guilds dev

.PHONY: test
test: lint build temporal temporal-server sandbox-image ## Run the linters, then every test against real PostgreSQL, Redis and a Temporal dev server
	@scripts/with-temporal.sh $(TEMPORAL_CLI) $(TEST_TEMPORAL_PORT) \
		$(GO) test $(GOTEST_FLAGS) ./...
	@# Allocation counts are only meaningful without the race detector.
	$(GO) test -count=1 -run 'Allocat|HotPathAllocs' ./internal/tools/ ./internal/connectors/
	$(MAKE) --no-print-directory fuzz-smoke
	$(MAKE) --no-print-directory helm-check
	$(MAKE) --no-print-directory conformance
	$(MAKE) --no-print-directory codegraph-accuracy

$(GOPLS): tools/codegraphbench/go.mod tools/codegraphbench/go.sum
	@mkdir -p $(BIN)
	@echo "building gopls (pinned in tools/codegraphbench)"
	cd tools/codegraphbench && $(GO) build -o ../../$(GOPLS) golang.org/x/tools/gopls

# The modules and floors of the short run; docs/benchmarks.md records the full one (CODEGRAPH_PER=8).
CODEGRAPH_MODULES ?= github.com/jackc/pgx/v5@v5.12.0,github.com/gin-gonic/gin@v1.12.0
CODEGRAPH_PER ?= 3
CODEGRAPH_FLOORS ?= -min-f1 0.8 -min-unflagged-precision 0.98

.PHONY: codegraph-accuracy
codegraph-accuracy: $(GOPLS) ## Compare code_callers and code_find with gopls on two real modules (tools/codegraphbench; a short sample, floors only, no timing)
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/guilds-code ./cmd/guilds-code
	cd tools/codegraphbench && $(GO) run . -helper $(abspath $(BIN))/guilds-code -gopls $(abspath $(GOPLS)) \
		-modules $(CODEGRAPH_MODULES) -per $(CODEGRAPH_PER) $(CODEGRAPH_FLOORS)
	$(MAKE) --no-print-directory codegraph-accuracy-pyts

# Python and TypeScript (issue 37, docs/adr/0710): one corpus each, against pyright and
# typescript-language-server, installed under /opt by .ci/run. docs/benchmarks.md records the full run.
PYRIGHT ?= /opt/pyright/node_modules/.bin/pyright-langserver
TSSERVER ?= /opt/typescript-language-server/node_modules/.bin/typescript-language-server
CODEGRAPH_PYTHON ?= click@8.1.3=/usr/lib/python3/dist-packages/click
CODEGRAPH_TYPESCRIPT ?= immer@11.2.14=/opt/codegraph-ts/node_modules/immer/src
CODEGRAPH_PYTS_FLOORS ?= -min-f1 0.6 -min-unflagged-precision 0.8

.PHONY: codegraph-accuracy-pyts
codegraph-accuracy-pyts: ## The code graph against pyright and typescript-language-server (a short sample, floors only, no timing)
	@if [ ! -x $(PYRIGHT) ] || [ ! -x $(TSSERVER) ] || [ ! -d /opt/codegraph-ts/node_modules/immer/src ]; then \
		echo "codegraph-accuracy-pyts: pyright, typescript-language-server or the corpora are not installed (see .ci/run)"; \
		if [ -n "$$CI" ]; then exit 1; fi; exit 0; fi
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/guilds-code ./cmd/guilds-code
	cd tools/codegraphbench && $(GO) run . -helper $(abspath $(BIN))/guilds-code -per $(CODEGRAPH_PER) \
		-python $(CODEGRAPH_PYTHON) -pyright $(PYRIGHT) -typescript $(CODEGRAPH_TYPESCRIPT) -tsserver $(TSSERVER) \
		$(CODEGRAPH_PYTS_FLOORS)

.PHONY: mcp-servers
mcp-servers: ## Install the published MCP servers the e2e suite adds (e2e/mcpservers, npm ci; cached by the lockfile's hash)
	scripts/mcpservers-install.sh

.PHONY: sandbox-image
sandbox-image: ## Build the agent sandbox image guilds-sandbox:latest into Podman (cached; see scripts/sandbox-image.sh)
	scripts/sandbox-image.sh

.PHONY: fuzz-smoke
# A count, not a duration: a time budget can end while the fuzzer is minimising a new
# input, which Go reports as a failure ("context deadline exceeded").
fuzz-smoke: ## Run each fuzz target briefly (100,000 inputs each)
	@for t in $$(grep -rhoE '^func (Fuzz[A-Za-z0-9_]+)' --include='*_test.go' internal | sed 's/func //' | sort -u); do \
		pkg=$$(grep -rlE "^func $$t\(" --include='*_test.go' internal | head -1 | xargs dirname); \
		echo "fuzz $$t in ./$$pkg"; \
		$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime 100000x -fuzzminimizetime 2s ./$$pkg || exit 1; \
	done

.PHONY: load
LOAD_RUNS ?= 100
LOAD_CALLS ?= 20
load: temporal ## Load harness (not in make test): LOAD_RUNS runs × LOAD_CALLS tool calls on the dev server; LOAD_WORKERS=2, LOAD_KILL=1 (kills one of two workers); see docs/scaling.md
	LOAD_RUNS=$(LOAD_RUNS) LOAD_CALLS=$(LOAD_CALLS) TEMPORAL_CLI=$(abspath $(TEMPORAL_CLI)) \
		$(GO) test -tags load -count=1 -timeout 30m -run '^TestLoad$$' -v ./workflows/run/

.PHONY: prod-shape
PROD_RUNS ?= 100
PROD_TURNS ?= 10
prod-shape: temporal-server ## Production shape (a short variant runs in make test): Temporal's server on PostgreSQL, two API replicas, two workers, faults (a replica killed mid OAuth callback and under an SSE follower, a worker killed, Temporal and the platform's PostgreSQL restarted); PROD_RUNS runs × PROD_TURNS turns of 2 calls (100 × 10 and 500 × 5 in docs/scaling.md)
	PROD_RUNS=$(PROD_RUNS) PROD_TURNS=$(PROD_TURNS) $(GO) test -count=1 -timeout 90m -run '^TestProductionShape$$' -v ./e2e/

.PHONY: fairness
FAIR_QUIET ?= 2
fairness: temporal ## Fairness harness (not in make test): a noisy organisation at 100x a quiet one's load, with and without fairness keys; see docs/benchmarks.md
	for f in on off; do FAIRNESS=$$f FAIR_QUIET=$(FAIR_QUIET) LOAD_CALLS=$(LOAD_CALLS) TEMPORAL_CLI=$(abspath $(TEMPORAL_CLI)) \
		$(GO) test -tags load -count=1 -timeout 30m -run '^TestFairness$$' -v ./workflows/run/ || exit 1; done

.PHONY: bench
bench: ## Run the benchmarks recorded in docs/benchmarks.md
	$(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: vet
vet: ## go vet and gofmt check
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

.PHONY: conformance
conformance: build ## Run the MCP conformance suite against our client
	conformance/run.sh
