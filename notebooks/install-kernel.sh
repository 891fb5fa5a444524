#!/usr/bin/env bash
# Installs the "gonb" Jupyter kernel for this checkout (`make kernel` calls it
# once bin/gonb and bin/goimports are built). Usage: install-kernel.sh GODIR
# (the directory of the Go toolchain's `go`, as `go env GOROOT`/bin).
#
# GoNB's --install writes kernel.json with an empty env, so the kernel would
# find goimports and go only on the PATH Jupyter happens to be started with.
# This sets kernel.json's env: PATH=<checkout>/bin:GODIR:${PATH} (Jupyter
# fills ${PATH} in at each start; jupyter_client 7 or later). GoNB's own log
# (klog) goes to gonb.log beside kernel.json instead of every notebook's
# stderr; only a fatal error (the kernel not starting) still reaches stderr.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
godir="${1:?usage: install-kernel.sh GODIR}"
[ -x "$godir/go" ] || { echo "install-kernel.sh: no go in $godir" >&2; exit 1; }
for tool in gonb goimports; do
  [ -x "$repo/bin/$tool" ] || { echo "install-kernel.sh: $repo/bin/$tool is not built (make kernel builds it)" >&2; exit 1; }
done
py=/usr/bin/python3; [ -x "$py" ] || py=python3

# Where GoNB installs (its internal/kernel/install.go): $JUPYTER_DATA_DIR, else
# ~/.local/share/jupyter (~/Library/Jupyter on macOS).
if [ -n "${JUPYTER_DATA_DIR:-}" ]; then data="$JUPYTER_DATA_DIR"
elif [ "$(uname -s)" = Darwin ]; then data="$HOME/Library/Jupyter"
else data="$HOME/.local/share/jupyter"; fi
dir="$data/kernels/gonb"
log="$dir/gonb.log"
mkdir -p "$dir"
# Every kernel start appends ~20 lines; keep one older generation past 10 MB.
if [ -f "$log" ] && [ "$(wc -c <"$log")" -gt 10485760 ]; then mv -f "$log" "$log.1"; fi

# GoNB copies these flags into kernel.json's argv. --extra_log sends the log
# to the file (it is also what stops GoNB printing its "Info/Warning/Error
# message" self-test lines to stderr at every start); --log_file keeps klog
# from opening files of its own under /tmp.
PATH="$repo/bin:$godir:$PATH" "$repo/bin/gonb" --install --force_deps --force_copy --go_work="$repo" \
  --logtostderr=false --stderrthreshold=FATAL --log_file="$log" --extra_log="$log"

"$py" - "$dir/kernel.json" "$repo/bin:$godir" <<'EOF'
import json, os, sys
path, first = sys.argv[1], sys.argv[2]
with open(path) as f:
    spec = json.load(f)
if not isinstance(spec.get("env"), dict):
    spec["env"] = {}
spec["env"]["PATH"] = first + ":${PATH}"
tmp = path + ".tmp"
with open(tmp, "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")
os.replace(tmp, path)
EOF

# The kernel Jupyter resolves as "gonb" (the first data directory holding
# kernels/gonb) must be this one. (`jupyter --paths`, not `jupyter kernelspec
# list`, which loads every kernel's Python and its debugger warnings.)
found="$(jupyter --paths --json | "$py" -c 'import json, os, sys
print(next((os.path.join(d, "kernels", "gonb") for d in json.load(sys.stdin)["data"] if os.path.isfile(os.path.join(d, "kernels", "gonb", "kernel.json"))), ""))')"
if [ "$(realpath -m "$found")" != "$(realpath -m "$dir")" ]; then
  echo "install-kernel.sh: GoNB installed its kernel in $dir, but Jupyter's \"gonb\" kernel is ${found:-missing} (JUPYTER_DATA_DIR or XDG_DATA_HOME?)" >&2
  exit 1
fi
echo "kernel \"gonb\" installed in $dir: it runs with PATH=$repo/bin:$godir:\$PATH (goimports, go), GoNB's log in $log"
echo "GoNB logs 'gopls is not installed' (to gonb.log) on each start: gopls@latest needs Go 1.27; autocomplete is off, nothing else is affected"
