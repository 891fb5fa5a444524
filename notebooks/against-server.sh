#!/usr/bin/env bash
# Executes the quickstart once more, pointed at a server by BHASHA_ENDPOINT
# alone (no edit to the notebook): `bhasha sim` stands in for vLLM on
# loopback. The executed copy lands in OUT/endpoint/ (with the run it wrote)
# for notebooks_test.go to check. Usage: against-server.sh OUT KERNEL (the
# name of this checkout's kernel, `make kernel`).
set -euo pipefail
out="$(realpath "$1")/endpoint"
kernel="${2:?usage: against-server.sh OUT KERNEL}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$out" && mkdir -p "$out/notebooks"
cp "$repo/notebooks/00-quickstart.ipynb" "$out/notebooks/"
ln -s "$repo/testdata" "$out/testdata"
addr=127.0.0.1:18431
"$repo/bin/bhasha" sim --addr "$addr" --bundle "" >"$out/sim.log" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/18431) 2>/dev/null && break; sleep 0.1; done
# As a user would start Jupyter: a PATH with only go, and BHASHA_ENDPOINT
# (the kernel finds bin/goimports through its kernel.json, make kernel);
# where Jupyter keeps its kernels is kept.
userpath="$(dirname "$(command -v go)"):/usr/bin:/bin"
keep=(HOME="$HOME" PATH="$userpath" BHASHA_ENDPOINT="http://$addr/v1")
for v in JUPYTER_DATA_DIR JUPYTER_PATH JUPYTER_CONFIG_DIR JUPYTER_RUNTIME_DIR XDG_DATA_HOME; do [ -z "${!v:-}" ] || keep+=("$v=${!v}"); done
env -i "${keep[@]}" "$(command -v jupyter)" nbconvert --to notebook \
  --execute --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name="$kernel" --output-dir "$out" --output 00-quickstart "$out/notebooks/00-quickstart.ipynb" \
  2>&1 | tee "$out/00-quickstart.log" # pipefail: nbconvert's status
