#!/usr/bin/env bash
# A supported Node for this shell, from the npm registry's node-linux-<arch> package (the official
# build, with its C headers under include/node), unpacked once into the cache folder
# (<cache>/node/<version>/, the cache of src/imaging/cache-dir.ts).
# Usage: eval "$(bash scripts/node.sh)"        Node ≥ the floor of package.json's engines, or the newest of the floor's major
#        eval "$(bash scripts/node.sh 24)"     exactly major 24
#        bash scripts/node.sh 24 --bin         prints the node binary's path only
# The lines printed put that Node first on PATH and point npm's native builds (node-gyp's nodedir) at
# its headers: better-sqlite3 compiled against another Node's headers would not load.
# Nothing is printed when the node on PATH already fits. Without npm, root installs Debian's npm first.
set -euo pipefail
# A failure prints `false`, so that `eval "$(…)" && next` stops instead of going on with the old node.
failed() { if [ "${2:-}" != --bin ]; then echo false; fi; }
trap 'rc=$?; if [ "$rc" != 0 ]; then failed "$@"; fi' EXIT
cd "$(dirname "$0")/.."
floor=$(sed -n 's/.*"node": *">=\([0-9]*\).*/\1/p' package.json)
major=${1:-$floor}
only_bin=${2:-}
exact=$([ $# -ge 1 ] && echo 1 || echo 0)

fits() {
  local v
  v=$("$1" --version 2>/dev/null) || return 1
  v=${v#v}
  v=${v%%.*}
  if [ "$exact" = 1 ]; then [ "$v" = "$major" ]; else [ "$v" -ge "$major" ]; fi
}

say() {
  if [ "$only_bin" = --bin ]; then echo "$1/bin/node"; else printf 'export PATH=%q:"$PATH"\nexport npm_config_nodedir=%q\n' "$1/bin" "$1"; fi
}

if [ "$only_bin" != --bin ] && command -v node >/dev/null 2>&1 && fits node; then exit 0; fi

if [ -n "${APPLIANCE_FORGE_CACHE_DIR:-}" ]; then cache=$APPLIANCE_FORGE_CACHE_DIR/node
elif [ "$(id -u)" = 0 ]; then cache=/var/cache/appliance-forge/node
else cache=${XDG_CACHE_HOME:-$HOME/.cache}/appliance-forge/node; fi
mkdir -p "$cache"

# A version of the major already unpacked will do, the newest first.
for d in $(find "$cache" -mindepth 1 -maxdepth 1 -name "$major.*" -printf '%f\n' | sort -t. -k1,1n -k2,2n -k3,3n -r); do
  if fits "$cache/$d/bin/node"; then say "$cache/$d"; exit 0; fi
done

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "scripts/node.sh: no node-linux package for $(uname -m): install Node $major yourself" >&2; exit 1 ;;
esac
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/node.sh: installing Debian's npm to fetch Node $major" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
  else
    echo "scripts/node.sh: npm is needed to fetch Node $major (as root: apt-get install npm)" >&2
    exit 1
  fi
fi

work=$(mktemp -d "$cache/.fetch-XXXXXX")
trap 'rc=$?; rm -rf "$work"; if [ "$rc" != 0 ]; then failed "$@"; fi' EXIT
echo "scripts/node.sh: fetching node-linux-$arch@$major from the npm registry" >&2
if ! file=$(cd "$work" && npm pack "node-linux-$arch@$major" --loglevel=error --ignore-scripts | tail -n 1) || [ -z "$file" ]; then
  echo "scripts/node.sh: npm pack node-linux-$arch@$major failed (above: npm's reason)" >&2
  exit 1
fi
tar -xzf "$work/$file" -C "$work"
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$work/package/package.json" | head -n 1)
version=${version#v} # Node 12's package writes v12.22.12: the folder is named as the lookup above expects
# Another process may have unpacked the same version meanwhile: theirs is as good.
mv -T "$work/package" "$cache/$version" 2>/dev/null || true
if ! fits "$cache/$version/bin/node"; then
  echo "scripts/node.sh: $cache/$version/bin/node does not run as Node $major" >&2
  exit 1
fi
say "$cache/$version"
