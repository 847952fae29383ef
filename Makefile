# otelitl: make test runs every test of every module; make check adds the linters.
#
# The repository holds several Go modules (scripts/modules.sh lists them, dependencies first).
# Each one is tested, vetted and linted on its own (GOWORK=off), as a user who imports it gets it:
# its go.mod replaces the repository's other modules with their directories. go.work joins them
# for commands run from the root, such as `go run ./examples/quickstart`.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/.bin
STATICCHECK_VERSION := v0.8.2
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
STATICCHECK := $(BIN)/staticcheck
BENCHSTAT := $(BIN)/benchstat
MODULES := $(shell scripts/modules.sh)
# Runs $(1) in every module's directory with the workspace off, stopping at the first failure.
each = set -e; for m in $(MODULES); do echo "--- $$m: $(1)"; (cd $$m && GOWORK=off $(1)); done
BENCH ?= .
BENCHCOUNT ?= 6
BENCHTIME ?= 1s

.PHONY: all test unit fuzz fuzz-short e2e loadtest ocb check fmt vet staticcheck tidy-check bench benchstat tools tidy capture modules bench-pipeline bench-targets

all: check

## test: everything the project's tests need: unit and integration tests of every module under the
## race detector, a short fuzz pass, the end-to-end tests on a real Prometheus, and the ocb build.
test: unit fuzz-short e2e ocb

## unit: go test -race in every module (the end-to-end tests skip themselves here).
unit:
	@$(call each,$(GO) test -race -count=1 ./...)

## e2e: builds or finds Prometheus 3, then runs the built collector for real: against Prometheus
## (scrape, remote write, native OTLP), under load, through a backend outage and a restart, as two
## replicas, under a cardinality flood, every shipped config against 4 MiB backends, long replies
## and the attacks of issue 13 (-parallel 8: the configs are probed side by side, each waiting
## out gRPC's 120 s handshake timeout), a hostile span corpus, and checks the module cut. About
## fifteen minutes. Reports: FLOOD_REPORT=file (RSS at the default cardinality limit) and
## LIMITS_REPORT=file (message sizes).
e2e:
	scripts/install-prometheus.sh
	scripts/install-ocb.sh
	cd e2e && PATH="$(BIN):$$PATH" OTELITL_E2E=1 GOWORK=off $(GO) test -count=1 -v -timeout 40m -parallel 8 -run . ./...

## loadtest: the sustained load alone (LOAD_RATE generations/s of LOAD_CHUNKS chunks for
## LOAD_SECONDS; defaults 1000, 200, 60), its figures written to loadtest.txt.
loadtest:
	cd e2e && OTELITL_E2E=1 LOAD_REPORT=$(CURDIR)/loadtest.txt GOWORK=off $(GO) test -count=1 -v -timeout 15m -run 'TestLoad$$' .

## fuzz: each fuzz target for FUZZTIME executions (default 300000x, about a minute here);
## fuzz-short is the CI pass (20000x, a few seconds each). Seeds are the f.Add calls of each target;
## an input that fails is saved under the package's testdata/fuzz and replays in every go test. A
## target is NAME:MODULE:PACKAGE. Minimizing a new input is capped at 5 s: Go's minimizer costs the
## square of an input's length, and a stream's inputs are long.
## The budget is a count, not a duration: with a duration, Go before 1.27 can fail a target with
## "context deadline exceeded" as the time runs out, with no failing input (golang/go#75804, a race
## in the fuzzing coordinator; it failed FuzzConfig in a CI run on go1.26.8).
FUZZTIME ?= 300000x
FUZZ_TARGETS := FuzzDecode:collector:./genaispan FuzzConfig:collector:./itlprocessor FuzzConfig:collector:./itlmetricsconnector \
	FuzzStream:otelitl:./httpitl FuzzEvent:otelitl:./httpitl
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  name=$${t%%:*}; rest=$${t#*:}; mod=$${rest%%:*}; pkg=$${rest#*:}; \
	  echo "fuzzing $$name in $$mod/$$pkg for $(FUZZTIME)"; \
	  (cd $$mod && GOWORK=off $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s "$$pkg"); \
	done
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=20000x

## ocb: builds the distribution from exporter-config/builder-config.yaml and validates the configs with it.
ocb:
	scripts/ocb-check.sh

## check: gofmt, go vet, staticcheck and tidy go.mod files in every module, then the tests.
check: fmt vet staticcheck tidy-check test

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.bin/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change these files (run gofmt -w):"; echo "$$out"; exit 1; fi

vet:
	@$(call each,$(GO) vet ./...)

## tidy-check: every go.mod and go.sum is what go mod tidy would write.
tidy-check:
	@$(call each,$(GO) mod tidy -diff)

$(STATICCHECK):
	GOBIN=$(BIN) GOWORK=off $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(BENCHSTAT):
	GOBIN=$(BIN) GOWORK=off $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)

tools: $(STATICCHECK) $(BENCHSTAT)

staticcheck: $(STATICCHECK)
	@$(call each,$(STATICCHECK) ./...)

## tidy: go mod tidy in every module.
tidy:
	@$(call each,$(GO) mod tidy)

## modules: the modules, dependencies first.
modules:
	@scripts/modules.sh

## capture: runs the real npm packages of other instrumentations against fakellm and rewrites the
## fixtures in testdata/captured (needs Node 20 and npm; the tests read the committed fixtures).
capture:
	tools/capture/run.sh

## bench: every benchmark, BENCHCOUNT runs each, side by side with benchstat (see BENCHMARKS.md).
## Raw results go to bench.txt (the client and the components) and bench-compare.txt (the bench/
## comparison module).
bench: $(BENCHSTAT)
	set -o pipefail; for m in otelitl otelitl/test collector; do \
	  (cd $$m && GOWORK=off $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) ./...) || exit 1; \
	done | tee bench.txt
	cd bench && GOWORK=off $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) . | tee ../bench-compare.txt
	$(BENCHSTAT) -filter '.name:/(PerChunk|Reply)/' -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:Clock' -col /clock bench.txt
	$(BENCHSTAT) -filter '.name:/(End1000|WireBytes)/' -col /enc bench.txt
	$(BENCHSTAT) -filter '.name:/(ChunkNotRecording|ConsumeTraces|ProcessSpan)/' bench.txt
	$(BENCHSTAT) -col /impl bench-compare.txt

## bench-pipeline: the built collector end to end (issue 14): pass-through against our components on
## one generated load (each as today's client writes it, with its figures, and as an older client
## did, without), replayed as the same OTLP bytes to each configuration, interleaved over rounds; CPU per million chunks, peak RSS, zero loss, ratios to pass-through, what receiving and
## exporting the processor's annotations costs (annotated against reencoded), a CPU profile.
## Table in bench-pipeline.txt. PIPELINE_RATE, PIPELINE_CHUNKS, PIPELINE_SECONDS, PIPELINE_ROUNDS,
## PIPELINE_FLUSH, PIPELINE_LOADS (defaults 1000, 200, 20, 3, 15s, the connector's own, all four loads; see `cd bench && go run ./pipeline -h`). About 30 minutes.
## PIPELINE_TOGETHER=1 runs each round's configurations at the same time instead, which resolves a
## few percent on a shared machine (give it two to four, e.g. PIPELINE_CONFIGS=passthrough,full).
bench-pipeline:
	cd bench && GOWORK=off $(GO) run ./pipeline -out $(CURDIR)/bench-pipeline.txt

## bench-targets: issue 14's three configurations (pass-through, full, drop_timeline) and the A/A
## control (a second pass-through), run together in each round on the four loads, 10 rounds: the
## ratios the targets are read from, each with its 95% interval. Table in bench-targets.txt. About
## 20 minutes.
bench-targets:
	cd bench && GOWORK=off $(GO) run ./pipeline -together -configs passthrough,passthrough_twin,full,drop_timeline \
		-rounds $${PIPELINE_ROUNDS:-10} -profile none -out $(CURDIR)/bench-targets.txt
