#!/usr/bin/env bash
# The Debian packages appliance-forge needs on this host, by purpose (data/host-tools.json):
#   build  — real image builds on the embedded server (mmdebstrap, GRUB, e2fsprogs, qemu-img, …)
#   boot   — `appliance-forge boot` (QEMU)
#   catalog — the package catalog refreshed from a Debian mirror (gpgv, xz, apt-helper)
#   test   — what the tests read images and documents with, and the browser the console tests drive (chromium)
# Usage: bash scripts/prereqs.sh [build] [boot] [catalog] [test]   (default: build boot)
# As root with apt-get (CI, a fresh Debian 12), the missing packages are installed; otherwise they are named.
# build also readies binfmt_misc for arm64 trees on an x86-64 host (host/foreign-arch.ts).
set -eu
cd "$(dirname "$0")/.."
[ $# -eq 0 ] && set -- build boot
# Sandboxed builds (build): a subordinate id range for the user that builds, so its image tools run
# as root of a user namespace (host/sandbox.ts); root adds one, anyone else is told how.
subids() {
  local who=$1 file
  for file in /etc/subuid /etc/subgid; do
    grep -q "^$who:" "$file" 2>/dev/null && continue
    if [ "$(id -u)" = 0 ]; then
      # the first free range of 65536 ids above every range already given out
      local start
      start=$(awk -F: 'BEGIN{m=100000} {e=$2+$3; if (e>m) m=e} END{print m}' /etc/subuid /etc/subgid 2>/dev/null || echo 100000)
      if [ "$file" = /etc/subuid ]; then usermod --add-subuids "$start-$((start + 65535))" "$who"; else usermod --add-subgids "$start-$((start + 65535))" "$who"; fi
      echo "appliance-forge: added the subordinate id range $start-$((start + 65535)) for $who to $file"
    else
      echo "appliance-forge: no subordinate id range for $who in $file: as root, run usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $who (or bash scripts/prereqs.sh)" >&2
    fi
  done
}
# A shared server (root): a pool of 256 ranges beside the builds' own one, one range per owner whose
# images it builds (host/owner-ranges.ts), as systemd-nspawn's --private-users=pick takes them.
owner_pool() {
  local file start ranges=256
  [ "$(id -u)" = 0 ] || return 0
  for file in /etc/subuid /etc/subgid; do
    awk -F: -v r=$((ranges * 65536)) '$1 == "root" && $3 >= r {f=1} END {exit !f}' "$file" 2>/dev/null && continue
    start=$(awk -F: 'BEGIN{m=100000} {e=$2+$3; if (e>m) m=e} END{print m}' /etc/subuid /etc/subgid 2>/dev/null || echo 100000)
    if [ "$file" = /etc/subuid ]; then usermod --add-subuids "$start-$((start + ranges * 65536 - 1))" root; else usermod --add-subgids "$start-$((start + ranges * 65536 - 1))" root; fi
    echo "appliance-forge: added a pool of $ranges subordinate id ranges ($start-$((start + ranges * 65536 - 1))) for the owners of root's builds to $file"
  done
}
# Foreign-architecture builds (build): an arm64 tree's package scripts run under qemu-user through
# binfmt_misc. Debian's qemu-aarch64 entry has the F flag (the emulator opened at registration), so it
# works in the build's user namespace too. Plain file tests when all is set: nothing added to a run.
binfmt() {
  local dir=/proc/sys/fs/binfmt_misc
  # a native arm64 host has no qemu-aarch64 entry to enable
  [ -f /usr/share/binfmts/qemu-aarch64 ] || return 0
  grep -qx enabled "$dir/qemu-aarch64" 2>/dev/null && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "appliance-forge: arm64 builds need binfmt_misc's qemu-aarch64 entry enabled: as root, run bash scripts/prereqs.sh build" >&2
    return 0
  fi
  # A container may refuse the mount: builds of this host's own architecture still work, so one line and on.
  if [ ! -e "$dir/status" ] && ! mount -t binfmt_misc binfmt_misc "$dir" 2>/dev/null; then
    echo "appliance-forge: cannot mount binfmt_misc (mount -t binfmt_misc binfmt_misc $dir): no arm64 builds on this host" >&2
    return 0
  fi
  update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || echo "appliance-forge: update-binfmts --enable qemu-aarch64 failed: no arm64 builds on this host" >&2
}
missing=$(node -e '
  const t = require("./data/host-tools.json"); const fs = require("fs"); const path = require("path");
  const dirs = (process.env.PATH + ":/usr/sbin:/sbin").split(":");
  const has = (tool) => tool.startsWith("/") ? fs.existsSync(tool) : dirs.some((d) => { try { fs.accessSync(path.join(d, tool), fs.constants.X_OK); return true; } catch { return false; } });
  const out = new Set();
  for (const purpose of process.argv.slice(1)) {
    if (!t[purpose] || purpose === "//") { console.error("unknown purpose " + purpose); process.exit(2); }
    for (const [tool, pkg] of Object.entries(t[purpose])) if (!has(tool)) out.add(pkg);
  }
  console.log([...out].sort().join(" "));
' "$@")
case " $* " in *" build "*) subids "$(id -un)"; owner_pool; [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ] && subids "$SUDO_USER" ;; esac
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "appliance-forge: installing Debian packages: $missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086 # a list of package names
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "appliance-forge: missing Debian packages: $missing (install them as root: apt-get install $missing)" >&2
    exit 1
  fi
fi
case " $* " in *" build "*) binfmt ;; esac
exit 0
