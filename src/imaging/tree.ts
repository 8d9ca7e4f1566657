// A private copy of an OS layer tree, and safe paths inside it. The tree holds symlinks of its own
// (`/lib` → `usr/lib`) and could hold hostile ones: a path is resolved segment by segment as the
// image will see it (an absolute link restarts at the tree's root, `..` never climbs above it), so
// whatever is written lands inside the tree.
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuildHost } from './build-host';
import { ImagingError } from './errors';

/**
 * Copy `layerDir` (read-only, shared) to `dest` (must not exist): owners, modes, links kept; reflinks
 * where the filesystem can. In the build's namespace, whose root owns the layer's files.
 */
export async function copyTree(layerDir: string, dest: string, host: BuildHost, signal?: AbortSignal): Promise<void> {
  await host.run('cp', ['-a', '--reflink=auto', '--', `${layerDir}/.`, dest], { signal });
}

const MAX_LINKS = 40; // as the kernel's ELOOP limit

/** What an image path is, without following it: enough to resolve paths as the image sees them. */
export type EntryKind = { readonly kind: 'dir' } | { readonly kind: 'link'; readonly target: string } | { readonly kind: 'other' };

/** Looks up one path of the image (segments from its root); undefined when there is nothing there. */
export type TreeLookup = (segments: readonly string[]) => Promise<EntryKind | undefined>;

/** The lookup of a tree on the host (lstat, readlink). */
export function hostLookup(tree: string): TreeLookup {
  return async (segments) => {
    const host = join(tree, ...segments);
    const st = await lstat(host).catch(() => undefined);
    if (st === undefined) return undefined;
    if (st.isSymbolicLink()) return { kind: 'link', target: await readlink(host) };
    return st.isDirectory() ? { kind: 'dir' } : { kind: 'other' };
  };
}

/**
 * The parent directories of image path `segments` (all but the last) as a path of real directories,
 * following symlinks inside the tree; missing directories are returned as the remaining segments to
 * create. `tree` is a tree on the host, or a lookup (a filesystem's index, see TreeIndex).
 */
export async function resolveParent(tree: string | TreeLookup, segments: readonly string[]): Promise<{ dir: string[]; missing: string[] }> {
  const lookup = typeof tree === 'string' ? hostLookup(tree) : tree;
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
    const entry = await lookup([...dir, s]);
    if (entry === undefined) return { dir, missing: [s, ...pending] };
    if (entry.kind === 'link') {
      if (++links > MAX_LINKS) throw new ImagingError('input', `too many symbolic links under /${segments.join('/')}`);
      if (entry.target.startsWith('/')) dir.length = 0;
      pending.unshift(...entry.target.split('/'));
      continue;
    }
    if (entry.kind !== 'dir') throw new ImagingError('input', `refused destination /${segments.join('/')}: /${[...dir, s].join('/')} is not a directory in the image`);
    dir.push(s);
  }
  return { dir, missing: [] };
}

/**
 * Every path of a tree with its kind, as the filesystem made from it holds them (`lost+found`, which
 * mke2fs adds, included): paths are resolved against it once the tree is gone. `d` a directory, `f`
 * anything else, a link its target after `l`.
 */
export type TreeIndex = Record<string, 'd' | 'f' | `l${string}`>;

/** The index of a tree (a walk of its directories, links read, nothing followed). */
export async function indexTree(tree: string): Promise<TreeIndex> {
  const index: TreeIndex = { 'lost+found': 'd' };
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(tree, rel), { withFileTypes: true })) {
      const path = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isSymbolicLink()) index[path] = `l${await readlink(join(tree, path))}`;
      else if (e.isDirectory()) {
        index[path] = 'd';
        await walk(path);
      } else index[path] = 'f';
    }
  };
  await walk('');
  return index;
}

/** The lookup of an index (paths joined with `/`, no leading one). */
export function indexLookup(index: TreeIndex): TreeLookup {
  return (segments) => {
    const v = Object.hasOwn(index, segments.join('/')) ? index[segments.join('/')] : undefined;
    if (v === undefined) return Promise.resolve(undefined);
    if (v === 'd') return Promise.resolve({ kind: 'dir' });
    if (v === 'f') return Promise.resolve({ kind: 'other' });
    return Promise.resolve({ kind: 'link', target: v.slice(1) });
  };
}

export interface Accounts {
  readonly users: ReadonlyMap<string, { uid: number; gid: number; home: string }>;
  readonly groups: ReadonlyMap<string, number>;
}

/** Users and groups as the image knows them (its /etc/passwd and /etc/group). */
export async function readAccounts(tree: string): Promise<Accounts> {
  const [passwd, group] = await Promise.all(['passwd', 'group'].map((p) => readFile(join(tree, 'etc', p), 'utf8')));
  return parseAccounts(passwd!, group!);
}

/** Accounts from the text of /etc/passwd and /etc/group. */
export function parseAccounts(passwd: string, group: string): Accounts {
  const lines = (text: string): string[][] => text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.split(':'));
  const users = new Map<string, { uid: number; gid: number; home: string }>();
  for (const f of lines(passwd)) users.set(f[0]!, { uid: Number(f[2]), gid: Number(f[3]), home: f[5] ?? '/' });
  const groups = new Map<string, number>();
  for (const f of lines(group)) groups.set(f[0]!, Number(f[2]));
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
