// An OS layer as a tar archive, made and unpacked inside the build's namespace: its owners are the
// image's ids (0…65535), never a host's subordinate ids, so a machine with another id mapping restores
// the same tree (the shared tier's layers, shared-tier.ts).
import { shellQuote } from '../../host/shell';
import type { BuildHost } from '../build-host';
import { runTool } from '../run';

// Numeric owners, modes, ACLs and every extended attribute (file capabilities: ping's cap_net_raw).
const KEPT = ['--numeric-owner', '--xattrs', '--xattrs-include=*', '--acls'];
const pack = (tree: string, archive: string): string[] => ['--create', '--file', archive, '--format=posix', '--sort=name', ...KEPT, '--one-file-system', '-C', tree, '.'];
const unpack = (archive: string, tree: string): string[] => ['--extract', '--file', archive, '--same-permissions', '--same-owner', '--delay-directory-restore', ...KEPT, '-C', tree];

/** The tree's archive at `archive` (a file the namespace's root may create), made inside the namespace. */
export async function packLayer(tree: string, archive: string, host: BuildHost, signal?: AbortSignal): Promise<void> {
  await host.run('tar', pack(tree, archive), { signal });
}

/**
 * The archive unpacked into `tree` (an empty folder the namespace's root owns), inside the namespace:
 * as that root it can give only the namespace's ids, and GNU tar refuses members that climb out of
 * the folder and sets links that point out of it only after every file is written.
 */
export async function unpackLayer(archive: string, tree: string, host: BuildHost, signal?: AbortSignal): Promise<void> {
  await host.run('tar', unpack(archive, tree), { signal });
}

/**
 * A tree of one namespace copied into another's (an owner's range, host/owner-ranges.ts) with the
 * image's ids: packed by the first's root, unpacked by the second's, through a pipe. Neither root
 * can touch the other's files; only the host's root, which runs the pipe, reaches both.
 */
export async function copyAcross(tree: string, from: BuildHost, dest: string, to: BuildHost, signal?: AbortSignal): Promise<void> {
  const words = (host: BuildHost, args: string[]): string => [...host.prefix, 'tar', ...args].map(shellQuote).join(' ');
  await runTool('bash', ['-o', 'pipefail', '-c', `${words(from, pack(tree, '-'))} | ${words(to, unpack('-', dest))}`], { signal });
}
