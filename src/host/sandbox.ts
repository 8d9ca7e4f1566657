// Who an image build's tools run as. With user namespaces and a subordinate id range (/etc/subuid,
// /etc/subgid, `newuidmap`/`newgidmap` from uidmap), every tool that touches a build's tree
// (mmdebstrap and the package scripts it runs, useradd, du, mke2fs, dpkg-query) runs as root of a
// user namespace whose ids 0…count-1 are the host's subordinate ids: a root that owns the tree and
// nothing else of the host. Without them, a server running as root builds as it always did
// ("privileged"), and says so once at start.
import { readFileSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve as resolvePath } from 'node:path';
import { runSync } from './child';
import { findOnPath, sbinPath } from './path';
import { missingTools, toolsMissingMessage } from './tools';

/** The ids a Debian system uses (0…65535): the namespace must map at least these. */
export const MAPPED_IDS = 65536;

export type Sandbox =
  | {
      readonly kind: 'userns';
      /**
       * false (a server running as root): namespace id n is host id `base + n`, so its root is a
       * subordinate id. true (an ordinary user): its root is that user (`unshare --map-root-user`)
       * and n ≥ 1 is `base + n - 1` (`--map-auto`): a root with no more rights on the host than the user.
       */
      readonly self: boolean;
      /** Host uid and gid of the namespace's root. */
      readonly uid0: number;
      readonly gid0: number;
      /** First subordinate uid and gid. */
      readonly uidBase: number;
      readonly gidBase: number;
      /** One line for the server's start: what is used and why. */
      readonly reason: string;
    }
  | { readonly kind: 'privileged'; readonly reason: string };

/** `APPLIANCE_FORGE_SANDBOX`: `auto` (default), `userns` (fail when impossible) or `privileged` (root only). */
export type SandboxChoice = 'auto' | 'userns' | 'privileged';

/** The well-formed entries of `/etc/subuid`-style `text` for a user (by name or uid), in the file's order. */
export function subordinateEntries(text: string, names: readonly string[]): Array<{ start: number; count: number }> {
  const out: Array<{ start: number; count: number }> = [];
  for (const line of text.split('\n')) {
    const [who, start, n] = line.trim().split(':');
    if (who === undefined || start === undefined || n === undefined || !names.includes(who)) continue;
    const s = Number(start);
    const count = Number(n);
    if (Number.isSafeInteger(s) && s > 0 && Number.isSafeInteger(count) && count > 0) out.push({ start: s, count });
  }
  return out;
}

/** The first range of `/etc/subuid`-style `text` for a user (by name or uid) with at least `count` ids. */
export function subordinateRange(text: string, names: readonly string[], count = MAPPED_IDS): number | undefined {
  return subordinateEntries(text, names).find((e) => e.count >= count)?.start;
}

/** This process's user as /etc/subuid and /etc/subgid name it (by name or uid), and the two files' texts ('' when unreadable). */
export function subordinateFiles(): { names: string[]; subuid: string; subgid: string } {
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  return { names: [userInfo().username, String(process.getuid?.() ?? -1)], subuid: read('/etc/subuid'), subgid: read('/etc/subgid') };
}

/** util-linux `unshare` arguments that run a command as root of the sandbox's namespace. */
export function unshareArgs(s: Extract<Sandbox, { kind: 'userns' }>): string[] {
  if (s.self) return ['--map-root-user', '--map-auto'];
  return [`--map-users=${s.uidBase},0,${MAPPED_IDS}`, `--map-groups=${s.gidBase},0,${MAPPED_IDS}`, '--setuid', '0', '--setgid', '0'];
}

/** Decide once per process (a probe runs `true` in a namespace). */
export function detectSandbox(choice: SandboxChoice = choiceFromEnv()): Sandbox {
  const root = process.getuid?.() === 0;
  if (choice === 'privileged') {
    return { kind: 'privileged', reason: 'privileged builds (APPLIANCE_FORGE_SANDBOX=privileged): package scripts and image tools run as the host root' };
  }
  const uid = process.getuid?.() ?? -1;
  const gid = process.getgid?.() ?? -1;
  const name = userInfo().username;
  const ids = subordinateFiles();
  const uidBase = subordinateRange(ids.subuid, ids.names);
  const gidBase = subordinateRange(ids.subgid, ids.names);
  const missing = missingTools(['newuidmap', 'newgidmap', 'unshare']);
  let why: string | undefined;
  let found: Sandbox | undefined;
  if (missing.length > 0) why = toolsMissingMessage(missing);
  else if (uidBase === undefined || gidBase === undefined) why = `no subordinate id range of ${MAPPED_IDS} ids for ${name} in /etc/subuid and /etc/subgid`;
  else {
    const candidate = {
      kind: 'userns', self: !root, uid0: root ? uidBase : uid, gid0: root ? gidBase : gid, uidBase, gidBase,
      reason: root
        ? `sandboxed builds: image tools run as root of a user namespace (host ids ${uidBase}…${uidBase + MAPPED_IDS - 1})`
        : `sandboxed builds: image tools run as root of a user namespace (${name} and its subordinate ids ${uidBase}…${uidBase + MAPPED_IDS - 2})`,
    } as const;
    const probe = runSync({ command: 'true', args: [], within: sandboxPrefix(candidate), timeoutMs: 10_000 });
    if (probe.code === 0) found = candidate;
    else why = `a user namespace cannot be made here (${(probe.stderr || probe.error?.message || 'unshare failed').split('\n')[0]})`;
  }
  if (found) return found;
  if (root && choice === 'auto') return { kind: 'privileged', reason: `privileged builds as root: ${why ?? 'no user namespace'} (bash scripts/prereqs.sh sets one up)` };
  return { kind: 'privileged', reason: `cannot sandbox builds: ${why ?? 'no user namespace'}` };
}

function choiceFromEnv(): SandboxChoice {
  const v = process.env.APPLIANCE_FORGE_SANDBOX;
  return v === 'userns' || v === 'privileged' ? v : 'auto';
}

let current: Sandbox | undefined;

/** This process's sandbox (detected on first use). */
export function currentSandbox(): Sandbox {
  current ??= detectSandbox();
  return current;
}

/**
 * Whether builds can run at all with this sandbox: an ordinary user needs the namespace (the
 * privileged path needs root), and `APPLIANCE_FORGE_SANDBOX=userns` insists on it. Undefined: they can.
 */
export function sandboxProblem(s: Sandbox = currentSandbox()): string | undefined {
  if (s.kind === 'userns') return undefined;
  if (process.getuid?.() !== 0) {
    return `${s.reason}: an ordinary user builds images in a user namespace (as root, bash scripts/prereqs.sh build installs uidmap; useradd gives each user a range in /etc/subuid and /etc/subgid)`;
  }
  if (process.env.APPLIANCE_FORGE_SANDBOX === 'userns') return `${s.reason} (APPLIANCE_FORGE_SANDBOX=userns)`;
  return undefined;
}

/** Host uid/gid of namespace id `n` (identity when privileged). */
export function hostId(s: Sandbox, n: number, kind: 'uid' | 'gid'): number {
  if (s.kind === 'privileged') return n;
  if (!Number.isSafeInteger(n) || n < 0 || n >= MAPPED_IDS) throw new RangeError(`id ${n} is outside the ${MAPPED_IDS} ids a build maps`);
  const [zero, base] = kind === 'uid' ? [s.uid0, s.uidBase] : [s.gid0, s.gidBase];
  if (!s.self) return base + n;
  return n === 0 ? zero : base + n - 1;
}

/** The command prefix that runs a program as the namespace's root (none when privileged): host/child.ts's `within`. */
export function sandboxPrefix(s: Sandbox | undefined): string[] {
  if (s === undefined || s.kind === 'privileged') return [];
  return [findOnPath('unshare', sbinPath()) ?? 'unshare', ...unshareArgs(s), '--'];
}

/**
 * The first folder on the way to `dir` that the namespace's root cannot pass (it is none of the
 * host's users: it needs the "others" search bit, unless the folder is its own). Undefined: reachable.
 */
export function blockedFolder(s: Sandbox, dir: string): string | undefined {
  // An ordinary user's namespace root is that user: it reaches what the user reaches.
  if (s.kind === 'privileged' || s.self) return undefined;
  const parts = resolvePath(dir).split('/').filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const p = `/${parts.slice(0, i).join('/')}`;
    let st;
    try {
      st = statSync(p);
    } catch {
      return undefined; // made later by the build, below a reachable folder
    }
    const ok = (st.mode & 0o001) !== 0 || (st.uid === s.uid0 && (st.mode & 0o100) !== 0) || (st.gid === s.gid0 && (st.mode & 0o010) !== 0);
    if (!ok) return p;
  }
  return undefined;
}
