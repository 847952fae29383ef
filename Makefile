# otelitl: make test runs every test the project has; make check adds the linters.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/.bin
STATICCHECK_VERSION := v0.8.2
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
STATICCHECK := $(BIN)/staticcheck
BENCHSTAT := $(BIN)/benchstat
# Where the reference spans live; the tests read OTELITL_GOLDEN_DIR.
export OTELITL_GOLDEN_DIR ?= $(abspath $(CURDIR)/../shared/golden)
BENCH ?= .
BENCHCOUNT ?= 6
BENCHTIME ?= 1s

.PHONY: all test unit fuzz fuzz-short e2e loadtest ocb check fmt vet staticcheck bench benchstat tools tidy

all: check

## test: everything the project's tests need: unit and integration tests under the race detector,
## the end-to-end test on a real Prometheus, and the ocb build of the distribution.
test: unit fuzz-short e2e ocb

## unit: go test -race over the module (the end-to-end tests skip themselves here).
unit:
	$(GO) test -race -count=1 ./...

## e2e: installs Prometheus when missing, then runs the built otelcol-itl for real: against
## Prometheus (scrape and remote write), under load, through a backend outage and a restart, as two
## replicas, and under a cardinality flood. About five minutes.
e2e:
	scripts/install-prometheus.sh
	OTELITL_E2E=1 $(GO) test -count=1 -v -timeout 30m -run . ./e2e/

## loadtest: the sustained load alone (LOAD_RATE generations/s of LOAD_CHUNKS chunks for
## LOAD_SECONDS; defaults 1000, 200, 60), its figures written to loadtest.txt.
loadtest:
	OTELITL_E2E=1 LOAD_REPORT=$(CURDIR)/loadtest.txt $(GO) test -count=1 -v -timeout 15m -run 'TestLoad$$' ./e2e/

## fuzz: each fuzz target for FUZZTIME (default 60s); fuzz-short is the CI pass. Seeds are the f.Add
## calls of each target; an input that fails is saved under the package's testdata/fuzz and replays in every go test.
FUZZTIME ?= 60s
FUZZ_TARGETS := FuzzDecode:./internal/decode FuzzConfig:./processor/itlprocessor FuzzConfig:./processor/itlmetricsconnector
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "fuzzing $${t%%:*} in $${t#*:} for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$${t%%:*}$$" -fuzztime $(FUZZTIME) "$${t#*:}"; \
	done
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=5s

## ocb: builds the distribution from exporter-config/builder-config.yaml and validates the configs with it.
ocb:
	scripts/ocb-check.sh

## check: gofmt, go vet, staticcheck, then the tests.
check: fmt vet staticcheck test

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.bin/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change these files (run gofmt -w):"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...

$(STATICCHECK):
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(BENCHSTAT):
	GOBIN=$(BIN) $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)

tools: $(STATICCHECK) $(BENCHSTAT)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

## bench: every benchmark, BENCHCOUNT runs each, side by side with benchstat (see BENCHMARKS.md).
## Raw results go to bench.txt (root module) and bench-compare.txt (the bench/ comparison module).
bench: $(BENCHSTAT)
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) ./... | tee bench.txt
	cd bench && $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) . | tee ../bench-compare.txt
	$(BENCHSTAT) -filter '.name:/(PerChunk|Reply)/' -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:Clock' -col /clock bench.txt
	$(BENCHSTAT) -filter '.name:/(End1000|WireBytes)/' -col /enc bench.txt
	$(BENCHSTAT) -filter '.name:/(ChunkNotRecording|ConsumeTraces|ProcessSpan)/' bench.txt
	$(BENCHSTAT) -col /impl bench-compare.txt

tidy:
	$(GO) mod tidy
