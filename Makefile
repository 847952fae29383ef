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

.PHONY: all test check fmt vet staticcheck bench benchstat tools tidy

all: check

## test: every unit and integration test, under the race detector.
test:
	$(GO) test -race -count=1 ./...

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
	$(BENCHSTAT) -filter '.name:PerChunk' -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:/(End1000|WireBytes)/' -col /enc bench.txt
	$(BENCHSTAT) -filter '.name:/(ChunkNotRecording|ConsumeTraces|ProcessSpan)/' bench.txt
	$(BENCHSTAT) -col /impl bench-compare.txt

tidy:
	$(GO) mod tidy
