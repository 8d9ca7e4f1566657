// An OS layer as a tar archive, made and unpacked inside the build's namespace: its owners are the
// image's ids (0…65535), never a host's subordinate ids, so a machine with another id mapping restores
// the same tree (the shared tier's layers, shared-tier.ts).
import type { BuildHost } from '../build-host';

// Numeric owners, modes, ACLs and every extended attribute (file capabilities: ping's cap_net_raw).
const KEPT = ['--numeric-owner', '--xattrs', '--xattrs-include=*', '--acls'];

/** The tree's archive at `archive` (a file the namespace's root may create), made inside the namespace. */
export async function packLayer(tree: string, archive: string, host: BuildHost, signal?: AbortSignal): Promise<void> {
  await host.run('tar', ['--create', '--file', archive, '--format=posix', '--sort=name', ...KEPT, '--one-file-system', '-C', tree, '.'], { signal });
}

/**
 * The archive unpacked into `tree` (an empty folder the namespace's root owns), inside the namespace:
 * as that root it can give only the namespace's ids, and GNU tar refuses members that climb out of
 * the folder and sets links that point out of it only after every file is written.
 */
export async function unpackLayer(archive: string, tree: string, host: BuildHost, signal?: AbortSignal): Promise<void> {
  await host.run('tar', ['--extract', '--file', archive, '--same-permissions', '--same-owner', '--delay-directory-restore', ...KEPT, '-C', tree], { signal });
}
