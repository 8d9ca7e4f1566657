// A private copy of an OS layer tree, and safe paths inside it. The tree holds symlinks of its own
// (`/lib` → `usr/lib`) and could hold hostile ones: a path is resolved segment by segment as the
// image will see it (an absolute link restarts at the tree's root, `..` never climbs above it), so
// whatever is written lands inside the tree.
import { lstat, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sandbox } from '../host/sandbox';
import { ImagingError } from './errors';
import { runTool } from './run';

/**
 * Copy `layerDir` (read-only, shared) to `dest` (must not exist): owners, modes, links kept; reflinks
 * where the filesystem can. In the build's namespace, whose root owns the layer's files.
 */
export async function copyTree(layerDir: string, dest: string, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
  await runTool('cp', ['-a', '--reflink=auto', '--', `${layerDir}/.`, dest], { signal, sandbox });
}

const MAX_LINKS = 40; // as the kernel's ELOOP limit

/**
 * The host path of the parent directories of image path `segments` (all but the last), following
 * symlinks inside the tree; missing directories are returned as the remaining segments to create.
 */
export async function resolveParent(tree: string, segments: readonly string[]): Promise<{ dir: string[]; missing: string[] }> {
  const pending = segments.slice(0, -1);
  const dir: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const s = pending.shift()!;
    if (s === '.' || s === '') continue;
    if (s === '..') {
      dir.pop();
      continue;
    }
    const st = await lstat(join(tree, ...dir, s)).catch(() => undefined);
    if (st === undefined) return { dir, missing: [s, ...pending] };
    if (st.isSymbolicLink()) {
      if (++links > MAX_LINKS) throw new ImagingError('input', `too many symbolic links under /${segments.join('/')}`);
      const target = await readlink(join(tree, ...dir, s));
      if (target.startsWith('/')) dir.length = 0;
      pending.unshift(...target.split('/'));
      continue;
    }
    if (!st.isDirectory()) throw new ImagingError('input', `refused destination /${segments.join('/')}: /${[...dir, s].join('/')} is not a directory in the image`);
    dir.push(s);
  }
  return { dir, missing: [] };
}

export interface Accounts {
  readonly users: ReadonlyMap<string, { uid: number; gid: number; home: string }>;
  readonly groups: ReadonlyMap<string, number>;
}

/** Users and groups as the image knows them (its /etc/passwd and /etc/group). */
export async function readAccounts(tree: string): Promise<Accounts> {
  const lines = async (p: string): Promise<string[][]> =>
    (await readFile(join(tree, 'etc', p), 'utf8')).split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.split(':'));
  const users = new Map<string, { uid: number; gid: number; home: string }>();
  for (const f of await lines('passwd')) users.set(f[0]!, { uid: Number(f[2]), gid: Number(f[3]), home: f[5] ?? '/' });
  const groups = new Map<string, number>();
  for (const f of await lines('group')) groups.set(f[0]!, Number(f[2]));
  return { users, groups };
}

/** `user:group` (or `user`, its primary group) → numeric owner in the image; unknown names are input errors. */
export function resolveOwner(accounts: Accounts, ownerGroup: string, what: string): { uid: number; gid: number } {
  const [user = '', group, extra] = ownerGroup.split(':');
  const u = accounts.users.get(user);
  if (extra !== undefined || u === undefined) throw new ImagingError('input', `unknown owner ${JSON.stringify(ownerGroup)} of ${what}: no user ${JSON.stringify(user)} in the image`);
  if (group === undefined || group === '') return { uid: u.uid, gid: u.gid };
  const gid = accounts.groups.get(group);
  if (gid === undefined) throw new ImagingError('input', `unknown owner ${JSON.stringify(ownerGroup)} of ${what}: no group ${JSON.stringify(group)} in the image`);
  return { uid: u.uid, gid };
}
