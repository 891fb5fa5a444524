# Bhasha — see README.md. Every target works offline after the first `go mod download`.
GO      ?= go
BIN     := bin/bhasha
PKGS    := ./...
SHELL   := /bin/bash

.PHONY: all build demo test vet bench conformance kernel notebooks clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/bhasha

## demo: the built-in default experiment on the simulator; everything under out/demo/
demo: build
	rm -rf out/demo
	./$(BIN) demo --out out/demo

## test: vet and every unit, integration and end-to-end test (no network, no GPU)
test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 15m $(PKGS)

## bench: Go benchmarks: engine throughput vs a raw load generator, cache replay, peak memory
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./analysis/... ./cmd/...

## conformance: the engine against llm-d-inference-sim v0.10.2 (independent vLLM simulator), loopback only
conformance:
	cd tools && $(GO) build -o ../bin/llm-d-inference-sim github.com/llm-d/llm-d-inference-sim/cmd/llm-d-inference-sim
	LLMD_SIM=$(CURDIR)/bin/llm-d-inference-sim $(GO) test -count=1 -tags conformance -run Conformance -v ./analysis/engine/

## kernel: install the GoNB Jupyter kernel with this repository in its go.work
kernel:
	cd tools && $(GO) tool gonb --install --force_deps --go_work=$(CURDIR)

## notebooks: execute every notebook headless into out/notebooks/*.html
notebooks: kernel
	mkdir -p out/notebooks
	for nb in notebooks/*.ipynb; do jupyter nbconvert --to html --execute --output-dir out/notebooks "$$nb" || exit 1; done

clean:
	rm -rf bin out
