#!/usr/bin/env bash
# Installs a GoNB Jupyter kernel for this checkout (`make kernel` calls it
# once bin/gonb and bin/goimports are built).
#
#   install-kernel.sh GODIR [NAME]   install the kernel NAME
#   install-kernel.sh --name         print the kernel name this checkout gets by default
#
# GODIR is the directory of the Go toolchain's `go` (`go env GOROOT`/bin).
# NAME defaults to gonb-<checkout folder>-<8 hex digits of its absolute
# path>, so two checkouts (two clones, or worktrees) get two kernels and
# neither rewrites the other's. The kernel's display name says the
# checkout: "Go (bhasha: <checkout>)". Installing NAME again for the same
# checkout replaces it; a kernel NAME that belongs to another checkout (its
# --go_work names another folder), or that is not a GoNB kernel, is left as
# it is and the script fails: remove it first (`jupyter kernelspec remove
# NAME`) or choose another name.
#
# The kernel goes into Jupyter's user data directory (`jupyter --data-dir`:
# $JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter or ~/.local/share/jupyter,
# ~/Library/Jupyter on macOS), as kernels/NAME. GoNB's --install writes
# kernels/gonb of a data directory; it runs on a staging data directory and
# the kernel is moved into place when complete, so a failure leaves every
# kernel as it was.
#
# GoNB writes kernel.json with an empty env, so the kernel would find
# goimports and go only on the PATH Jupyter happens to be started with.
# This sets kernel.json's env: PATH=<checkout>/bin:GODIR:${PATH} (Jupyter
# fills ${PATH} in at each start; jupyter_client 7 or later). GoNB's own log
# (klog) goes to gonb.log beside kernel.json instead of every notebook's
# stderr; only a fatal error (the kernel not starting) still reaches stderr.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd -P)"
py=/usr/bin/python3; [ -x "$py" ] || py=python3

# defaultname prints gonb-<folder>-<hash>: the folder's name in the
# characters Jupyter allows in a kernel name (lower case), and the start of
# the SHA-256 of the checkout's absolute path.
defaultname() {
  local base hash
  base="$(basename "$repo" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9._\n-' '-')"
  hash="$(printf '%s' "$repo" | sha256sum | cut -c1-8)"
  echo "gonb-$base-$hash"
}
if [ "${1:-}" = --name ]; then defaultname; exit 0; fi

godir="${1:?usage: install-kernel.sh GODIR [NAME] | install-kernel.sh --name}"
name="${2:-}"; [ -n "$name" ] || name="$(defaultname)"
if ! [[ "$name" =~ ^[a-zA-Z0-9._-]+$ ]]; then
  echo "install-kernel.sh: kernel name \"$name\": Jupyter allows only letters, digits, '.', '_' and '-'" >&2
  exit 1
fi
name="$(echo "$name" | tr 'A-Z' 'a-z')" # Jupyter looks kernel names up in lower case
[ -x "$godir/go" ] || { echo "install-kernel.sh: no go in $godir" >&2; exit 1; }
for tool in gonb goimports; do
  [ -x "$repo/bin/$tool" ] || { echo "install-kernel.sh: $repo/bin/$tool is not built (make kernel builds it)" >&2; exit 1; }
done
command -v jupyter >/dev/null || { echo "install-kernel.sh: no jupyter on PATH (make kernel installs it)" >&2; exit 1; }

data="$(jupyter --data-dir)"
dir="$data/kernels/$name"
log="$dir/gonb.log"

# checkout KERNELDIR prints the checkout a GoNB kernel runs (its -go_work),
# or "" when KERNELDIR holds no GoNB kernel.json.
checkout() {
  "$py" - "$1/kernel.json" <<'EOF'
import json, sys
try:
    with open(sys.argv[1]) as f:
        argv = json.load(f).get("argv") or []
except (OSError, ValueError, AttributeError):
    argv = []
print(next((a.split("=", 1)[1] for a in argv if isinstance(a, str) and a.lstrip("-").startswith("go_work=")), ""))
EOF
}
if [ -e "$dir" ]; then
  owner="$(checkout "$dir")"
  if [ "$owner" != "$repo" ]; then
    echo "install-kernel.sh: the kernel \"$name\" in $dir runs ${owner:-no GoNB checkout}, not $repo: left as it is;" \
      "choose another name (make kernel KERNEL=...) or remove it first (jupyter kernelspec remove $name)" >&2
    exit 1
  fi
fi

# The kernel Jupyter resolves as NAME is the first data directory's
# kernels/NAME (JUPYTER_PATH's folders come before the user's): one before
# $data would hide this one. (`jupyter --paths`, not `jupyter kernelspec
# list`, which loads every kernel's Python and its debugger warnings.)
hiding="$(jupyter --paths --json | "$py" -c 'import json, os, sys
name, data = sys.argv[1], os.path.realpath(sys.argv[2])
for d in json.load(sys.stdin)["data"]:
    if os.path.realpath(d) == data:
        break
    if os.path.isfile(os.path.join(d, "kernels", name, "kernel.json")):
        print(os.path.join(d, "kernels", name))
        break' "$name" "$data")"
if [ -n "$hiding" ]; then
  echo "install-kernel.sh: Jupyter would start the kernel \"$name\" in $hiding (JUPYTER_PATH), not one installed in $data: choose another name (make kernel KERNEL=...)" >&2
  exit 1
fi

mkdir -p "$data/kernels"
stage="$(mktemp -d "$data/.install-$name.XXXXXX")"
trap 'rm -rf "$stage"' EXIT

# GoNB copies these flags into kernel.json's argv (with the staging paths,
# rewritten below). --extra_log sends the log to the file (it is also what
# stops GoNB printing its "Info/Warning/Error message" self-test lines to
# stderr at every start); --log_file keeps klog from opening files of its
# own under /tmp.
staged="$stage/kernels/gonb"
mkdir -p "$staged"
JUPYTER_DATA_DIR="$stage" PATH="$repo/bin:$godir:$PATH" "$repo/bin/gonb" --install --force_deps --force_copy --go_work="$repo" \
  --logtostderr=false --stderrthreshold=FATAL --log_file="$staged/gonb.log" --extra_log="$staged/gonb.log"

"$py" - "$staged/kernel.json" "$staged" "$dir" "$repo/bin:$godir" "Go (bhasha: $repo)" <<'EOF'
import json, os, sys
path, staged, final, first, display = sys.argv[1:6]
with open(path) as f:
    spec = json.load(f)
spec["argv"] = [a.replace(staged, final) if isinstance(a, str) else a for a in spec["argv"]]
if not isinstance(spec.get("env"), dict):
    spec["env"] = {}
spec["env"]["PATH"] = first + ":${PATH}"
spec["display_name"] = display
tmp = path + ".tmp"
with open(tmp, "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")
os.replace(tmp, path)
EOF

# The log of the kernel being replaced stays; every kernel start appends
# ~20 lines, so keep one older generation past 10 MB.
if [ -f "$log" ]; then
  mv -f "$log" "$staged/gonb.log"
  [ -f "$log.1" ] && mv -f "$log.1" "$staged/gonb.log.1"
  if [ "$(wc -c <"$staged/gonb.log")" -gt 10485760 ]; then mv -f "$staged/gonb.log" "$staged/gonb.log.1"; fi
fi
if [ -e "$dir" ]; then mv "$dir" "$stage/old"; fi
mv "$staged" "$dir"

echo "kernel \"$name\" (Go (bhasha: $repo)) installed in $dir: it runs with PATH=$repo/bin:$godir:\$PATH (goimports, go), GoNB's log in $log"
echo "GoNB logs 'gopls is not installed' (to gonb.log) on each start: gopls@latest needs Go 1.27; autocomplete is off, nothing else is affected"
# The notebooks name the kernel "gonb" (GoNB's own name) in their
# metadata: Jupyter starts a kernel of that name when there is one.
gonbdir="$(jupyter --paths --json | "$py" -c 'import json, os, sys
print(next((os.path.join(d, "kernels", "gonb") for d in json.load(sys.stdin)["data"] if os.path.isfile(os.path.join(d, "kernels", "gonb", "kernel.json"))), ""))')"
if [ "$name" != gonb ] && [ -n "$gonbdir" ]; then
  other="$(checkout "$gonbdir")"
  echo "note: a kernel named \"gonb\" ($gonbdir) runs ${other:-no checkout of this repository}: Jupyter starts it for notebooks whose metadata names \"gonb\";" \
    "pick \"Go (bhasha: $repo)\" under Kernel > Change kernel, or remove it (jupyter kernelspec remove gonb)"
fi
