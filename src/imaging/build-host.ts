// The host as a build's stages see it, in one handle made once and handed down: who the tools that
// touch a tree run as (host/sandbox.ts: root of a user namespace, or the host's root), the host ids
// the image's ids are stored as, the tool runner through that namespace, and which folders the
// namespace's root can reach. The stages ask it; none of them reads the sandbox record.
import { existsSync } from 'node:fs';
import { lchown } from 'node:fs/promises';
import { leaseRange, ownerSandbox, poolOf, slotOfUid, type RangePool } from '../host/owner-ranges';
import { findOnPath, sbinPath } from '../host/path';
import { blockedFolder, currentSandbox, hostId, sandboxPrefix, sandboxProblem, type Sandbox } from '../host/sandbox';
import { ImagingError } from './errors';
import { runTool, runToolOutput, type RunOptions, type RunResult } from './run';

export interface BuildHost {
  /** What the builds run as and why: one line for a server's start. */
  readonly reason: string;
  /** The tools run as root of a user namespace (mmdebstrap's `unshare` mode); false: as the host's root. */
  readonly namespaced: boolean;
  /** An ordinary user's namespace: its root is that user, so the disk stage runs whole in a namespace child (disk/in-namespace.ts). */
  readonly ownNamespace: boolean;
  /** The host ids of the trees' owners, as a cache key holds them: a tree made in a namespace is read only through the same one. */
  readonly owners: string;
  /** Why builds cannot run here (an ordinary user without a namespace, or one insisted on); undefined: they can. */
  readonly problem: string | undefined;
  /** The command prefix that runs a program as the namespace's root (none when privileged). */
  readonly prefix: readonly string[];
  /** The host uid or gid of the image's id `n`. */
  hostId(n: number, kind: 'uid' | 'gid'): number;
  /** The image's id that the host id `host` of a tree stands for (hostId's inverse). */
  imageId(host: number, kind: 'uid' | 'gid'): number;
  /** Gives `path` (not what a link there points at) to the namespace's root: a folder or file its tools write. */
  own(path: string): Promise<void>;
  /** Runs a tool as the namespace's root (a tool that reads or writes a build's tree). */
  run(command: string, args: readonly string[], opts?: RunOptions): Promise<RunResult>;
  /** The same, its whole stdout returned (bounded: short reports). */
  output(command: string, args: readonly string[], opts?: Omit<RunOptions, 'onStdout'>): Promise<string>;
  /** Why the namespace's root cannot reach `dir` (what to change), or undefined when it can. */
  unreachable(dir: string, what: string): string | undefined;
  /** Refuses a folder the namespace's root cannot reach (the cache, a work dir), saying what to change. */
  assertReachable(dir: string, what: string): void;
  /**
   * The same host for a build's disk stage: its tools see `dirs` (the shared layers, .deb files and base
   * disks) read-only. A server running as root binds them read-only in a mount namespace of the host's
   * root before the tools enter their user namespace, so the namespace's root cannot remount them
   * (the kernel locks a mount's flags for a less privileged namespace). As the host's root or an
   * ordinary user's own namespace there is no such line to draw: the same host.
   */
  readOnly(dirs: readonly string[]): BuildHost;
  /**
   * The host of one build of an owner, held until `release()`: on a server running as root with a pool of
   * ranges (host/owner-ranges.ts), a namespace of the owner's own range, so no other owner's build shares a
   * host id with it; anywhere else, or for no owner, the same host.
   */
  leaseOwner(owner: string | undefined): Promise<OwnerHost>;
  /** Whether a host uid is the root of this namespace or of an owner's (a folder a dead build of either left). */
  isBuildRoot(uid: number): boolean;
}

/** A build host held for one owner's build. */
export interface OwnerHost {
  readonly host: BuildHost;
  release(): Promise<void>;
}

/** The handle of builds in `sandbox`; `pool`: the owners' ranges (none: every owner builds in `sandbox`). */
export function buildHostOf(sandbox: Sandbox, pool?: RangePool): BuildHost {
  const owned = new Map<number, BuildHost>();
  const prefix = sandboxPrefix(sandbox);
  const toHost = (n: number, kind: 'uid' | 'gid'): number => hostId(sandbox, n, kind);
  const unreachable = (dir: string, what: string): string | undefined => {
    const blocked = blockedFolder(sandbox, dir);
    if (blocked === undefined) return undefined;
    return `the ${what} ${dir} cannot be reached from the build's user namespace: ${blocked} lets no other user through (chmod o+x ${blocked}, or choose another cache folder)`;
  };
  return {
    reason: sandbox.kind !== 'userns' || sandbox.self ? sandbox.reason
      : pool ? `${sandbox.reason}; each owner's builds in a range of its own (${pool.ranges} ranges from host id ${pool.uidBase})`
        : `${sandbox.reason}; every owner's builds share it (bash scripts/prereqs.sh build adds a pool of ranges, one per owner)`,
    namespaced: sandbox.kind === 'userns',
    ownNamespace: sandbox.kind === 'userns' && sandbox.self,
    owners: sandbox.kind === 'userns' ? [sandbox.uid0, sandbox.gid0, sandbox.uidBase, sandbox.gidBase].join(':') : 'host',
    get problem() {
      return sandboxProblem(sandbox);
    },
    prefix,
    hostId: toHost,
    imageId: (host, kind) => {
      if (sandbox.kind === 'privileged') return host;
      const [zero, base] = kind === 'uid' ? [sandbox.uid0, sandbox.uidBase] : [sandbox.gid0, sandbox.gidBase];
      if (!sandbox.self) return host - base;
      return host === zero ? 0 : host - base + 1;
    },
    own: (path) => lchown(path, toHost(0, 'uid'), toHost(0, 'gid')),
    run: (command, args, opts = {}) => runTool(command, args, { ...opts, within: prefix }),
    output: (command, args, opts = {}) => runToolOutput(command, args, { ...opts, within: prefix }),
    unreachable,
    assertReachable: (dir, what) => {
      const problem = unreachable(dir, what);
      if (problem !== undefined) throw new ImagingError('setup', problem);
    },
    readOnly(dirs) {
      if (sandbox.kind !== 'userns' || sandbox.self) return this;
      const within = (): string[] => [...readOnlyPrefix(dirs.filter((d) => existsSync(d))), ...prefix];
      return {
        ...this,
        get prefix() {
          return within();
        },
        run: (command, args, opts = {}) => runTool(command, args, { ...opts, within: within() }),
        output: (command, args, opts = {}) => runToolOutput(command, args, { ...opts, within: within() }),
        readOnly: (more) => this.readOnly([...dirs, ...more]),
      };
    },
    isBuildRoot: (uid) => {
      if (uid === toHost(0, 'uid')) return true;
      if (pool === undefined) return false;
      const slot = slotOfUid(pool, uid);
      return slot !== undefined && uid === ownerSandbox(pool, slot).uid0;
    },
    async leaseOwner(owner) {
      if (owner === undefined || pool === undefined) return { host: this, release: () => Promise.resolve() };
      const lease = await leaseRange(owner, pool);
      let host = owned.get(lease.slot);
      if (host === undefined) owned.set(lease.slot, (host = buildHostOf(ownerSandbox(pool, lease.slot), pool)));
      return { host, release: () => lease.release() };
    },
  };
}

/**
 * `unshare --mount` (as the host's root), each of `dirs` bound read-only onto itself, then the rest of
 * the command line. The mounts are private to that namespace and end with its last process.
 */
function readOnlyPrefix(dirs: readonly string[]): string[] {
  if (dirs.length === 0) return [];
  const unshare = findOnPath('unshare', sbinPath()) ?? 'unshare';
  const bind = 'while [ "$1" != -- ]; do mount --bind -o ro "$1" "$1" || exit 125; shift; done; shift; exec "$@"';
  return [unshare, '--mount', '--propagation', 'private', '--', 'sh', '-c', bind, 'sh', ...dirs, '--'];
}

let current: BuildHost | undefined;

/** This process's build host (its sandbox detected on first use). */
export function currentBuildHost(): BuildHost {
  if (current === undefined) {
    const sandbox = currentSandbox();
    current = buildHostOf(sandbox, poolOf(sandbox));
  }
  return current;
}
