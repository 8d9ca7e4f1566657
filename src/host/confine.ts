// Confinement of the programs that read an untrusted disk image (qemu-img, qemu-system-x86_64, and the
// sfdisk and debugfs of the boot check's direct-kernel path): each runs in a mount namespace of its own
// whose root is an empty, read-only tmpfs holding only
//   - the system's programs and libraries (/usr and the /bin, /lib… links or folders), read only;
//   - /etc/ld.so.cache and /etc/resolv.conf (QEMU's user network forwards DNS to the host's resolver), read only;
//   - /dev/null, zero, random and urandom;
//   - the files and folders the caller names (the image, read only; its private folders), each at
//     its own absolute path, so the command line and QEMU's messages name the host's paths;
//   - /dev/kvm only when the caller names it as a device (a boot under KVM: the only path bound without nodev).
// There is no /proc, /sys, /home, /root, /var, /run or /tmp, and the program runs with no capabilities
// (setpriv: bounding and inheritable sets emptied, no new privileges), so it can neither mount, nor
// chroot out, nor open a file by handle. Whatever a disk format's metadata names (a VMDK extent, a
// backing or data file), a parser of QEMU's can open only these files.
//
// root runs it with `unshare --mount`; an ordinary user with `unshare --user --map-root-user --mount`
// (the user's own uid as the namespace's root: no subordinate ids are needed). Where neither works
// (user namespaces disabled, or no mount in them), `confinementProblem()` says why and the callers refuse
// to run the program at all: there is no unconfined fallback.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runSync } from './child';
import { findOnPath, sbinPath } from './path';
import { missingTools, toolsMissingMessage } from './tools';

/** A file or folder the confined program sees at its own path. */
export interface ConfinedPath {
  readonly path: string;
  /** Read-only unless true (the image never is). */
  readonly writable?: boolean | undefined;
  /** A character device the program opens (only /dev/kvm): bound read-write without nodev. */
  readonly device?: boolean | undefined;
}

export interface ConfineSpec {
  /**
   * An empty folder of the caller's: the new root (a tmpfs) is mounted over it, in the namespace only;
   * nothing is written there on the host.
   */
  readonly root: string;
  /** Absolute paths, already resolved (no links); a folder's subfolders are bound after it. */
  readonly paths: readonly ConfinedPath[];
  /** The program's working directory inside (one of `paths` or below one); default `/`. */
  readonly cwd?: string | undefined;
}

/** The programs the confinement itself runs (util-linux, mount, coreutils; and /bin/sh). */
export const CONFINEMENT_TOOLS = ['unshare', 'setpriv', 'mount', 'chroot', 'cp'] as const;

// $1 the new root's mount point, $2 the working directory inside, $3 the number of (mount options, path) pairs
// that follow; then the program and its arguments. Every value is a positional argument, never text of
// the script. The system folders are bound first, the caller's paths then (sorted, so a folder comes
// before what is below it; a path already there, such as an image under /usr, is bound over itself).
const SCRIPT = `set -eu
root=$1 cwd=$2 n=$3
shift 3
mount -t tmpfs -o mode=0755,size=4m,nosuid,nodev af-confined "$root"
mkdir "$root/etc" "$root/dev"
links=
for d in bin sbin lib lib32 lib64 libx32 usr; do
  if [ -L "/$d" ]; then links="$links /$d"
  elif [ -d "/$d" ]; then mkdir "$root/$d"; mount --bind -o ro,nosuid,nodev "/$d" "$root/$d"
  fi
done
[ -z "$links" ] || cp -P $links "$root/"
for f in /etc/ld.so.cache /etc/resolv.conf; do
  if [ -f "$f" ]; then : > "$root$f"; mount --bind -o ro,nosuid,nodev "$f" "$root$f"; fi
done
for f in null zero random urandom; do : > "$root/dev/$f"; mount --bind "/dev/$f" "$root/dev/$f"; done
while [ "$n" -gt 0 ]; do
  opts=$1 src=$2
  shift 2
  n=$((n - 1))
  dst=$root$src
  if [ -d "$src" ]; then mkdir -p "$dst"
  elif [ ! -e "$dst" ]; then mkdir -p "\${dst%/*}"; : > "$dst"
  fi
  mount --bind -o "$opts" "$src" "$dst"
done
mount -o remount,bind,ro,nosuid,nodev "$root"
exec chroot "$root" /bin/sh -c 'cd "$1" && shift && exec setpriv --no-new-privs --inh-caps=-all --bounding-set=-all -- "$@"' sh "$cwd" "$@"
`;

/** The namespace `unshare` makes: a mount namespace (root), or a user namespace holding one (anyone else). */
export function unshareNamespaceArgs(root: boolean): string[] {
  return root ? ['--mount', '--propagation', 'private'] : ['--user', '--map-root-user', '--mount', '--propagation', 'private'];
}

/**
 * host/child.ts's `within`: the command prefix that runs a program confined to `s.paths`; `asRoot`
 * (default: whether this process is root) picks the namespace (unshareNamespaceArgs).
 */
export function confinedPrefix(s: ConfineSpec, asRoot = process.getuid?.() === 0): string[] {
  const paths = [...s.paths].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const p of [s.root, ...paths.map((x) => x.path), s.cwd ?? '/']) {
    if (!path.isAbsolute(p) || p.includes('\0')) throw new TypeError(`a confined path must be absolute: ${JSON.stringify(p)}`);
  }
  const unshare = findOnPath('unshare', sbinPath()) ?? 'unshare';
  return [
    unshare, ...unshareNamespaceArgs(asRoot), '--', '/bin/sh', '-c', SCRIPT, 'af-confine',
    s.root, s.cwd ?? '/', String(paths.length), ...paths.flatMap((p) => [bindOptions(p), p.path]),
  ];
}

function bindOptions(p: ConfinedPath): string {
  if (p.device === true) return 'rw,nosuid';
  return `${p.writable === true ? 'rw' : 'ro'},nosuid,nodev`;
}

let problem: { readonly why: string | undefined } | undefined;

/**
 * Why programs cannot be confined on this host (undefined: they can). Probed once per process by
 * running `true` confined to nothing.
 */
export function confinementProblem(): string | undefined {
  problem ??= { why: probe() };
  return problem.why;
}

function probe(): string | undefined {
  const missing = missingTools(CONFINEMENT_TOOLS);
  if (missing.length > 0) return toolsMissingMessage(missing);
  const root = mkdtempSync(path.join(tmpdir(), 'af-confine-probe-'));
  try {
    const r = runSync({ command: 'true', args: [], within: confinedPrefix({ root, paths: [] }), timeoutMs: 20_000 });
    if (r.code === 0) return undefined;
    const said = (r.stderr || r.error?.message || `exit ${r.code ?? r.signal ?? '?'}`).split('\n')[0];
    const how = process.getuid?.() === 0
      ? 'root needs a private mount namespace (unshare --mount)'
      : 'an ordinary user needs a user namespace with a mount namespace in it (unshare --user --map-root-user --mount: user namespaces must be enabled, e.g. sysctl kernel.unprivileged_userns_clone=1 or, on Ubuntu, kernel.apparmor_restrict_unprivileged_userns=0), or run it as root';
    return `cannot confine the programs that read the image to it (${said}): ${how}`;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
