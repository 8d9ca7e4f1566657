// The root filesystem's times in a reproducible image: e2fsprogs 1.47.0 takes E2FSPROGS_FAKE_TIME for
// its own times but copies each file's ctime and atime from the tree, so the tree is clamped before
// `mke2fs -d` and the inodes' ctime, atime and crtime set afterwards (docs/images.md "Reproducible images").
import type { BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import { reproducibleEnv, type Reproducible } from '../reproducible';

/**
 * Just before `mke2fs -d`: every entry of the tree modified after the epoch (what the build itself
 * wrote: package scripts, settings, grub.cfg) gets the epoch as its mtime; older ones keep the time
 * their package gave them. Links are touched themselves, never followed.
 */
export async function clampTreeTimes(tree: string, r: Reproducible | undefined, host: BuildHost, signal?: AbortSignal): Promise<void> {
  if (r === undefined) return;
  const at = `@${r.sourceDateEpoch}`;
  // cwd the tree: find goes back to its starting folder, which the namespace's root may not reach (a user's 0700 folder).
  await host.run('find', [tree, '-xdev', '-newermt', at, '-exec', 'touch', '--no-dereference', '--no-create', '-m', '-d', at, '--', '{}', '+'], { cwd: tree, signal });
}

/** The inodes `mke2fs -d` used: the root directory and, in order, the first non-reserved one up to the used count. */
export function usedInodes(dumpe2fsHeader: string): number[] {
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(dumpe2fsHeader);
    if (!m) throw new ImagingError('tool', `dumpe2fs printed no "${name}"`);
    return Number(m[1]);
  };
  const used = field('Inode count') - field('Free inodes');
  const first = field('First inode');
  const out = [2];
  for (let i = first; i <= used; i++) out.push(i);
  return out;
}

/** debugfs commands setting ctime, atime and crtime of `inodes` to the epoch (mtime stays the tree's, clamped). */
export function inodeTimesScript(inodes: readonly number[], sourceDateEpoch: number): string {
  const at = `@${sourceDateEpoch}`;
  return inodes.map((n) => `sif <${n}> ctime ${at}\nsif <${n}> atime ${at}\nsif <${n}> crtime ${at}\n`).join('');
}

/**
 * Right after `mke2fs -d`: the times it copied from the tree (ctime, atime) or took from the clock
 * (crtime) set to the epoch, with one debugfs run. `device` is e2fsprogs' `name?offset=N`, in `cwd`.
 */
export async function pinInodeTimes(cwd: string, device: string, r: Reproducible | undefined, host: BuildHost, signal?: AbortSignal): Promise<void> {
  if (r === undefined) return;
  const header = await host.output('dumpe2fs', ['-h', device], { cwd, signal });
  const { stderr } = await host.run('debugfs', ['-w', '-f', '-', device], { cwd, signal, input: inodeTimesScript(usedInodes(header), r.sourceDateEpoch), env: reproducibleEnv(r) });
  // debugfs exits 0 whatever a command says: anything but its banner on stderr is a failure.
  const problems = stderr.split('\n').filter((l) => l.trim() !== '' && !/^debugfs \d/.test(l));
  if (problems.length > 0) throw new ImagingError('tool', `debugfs could not set the inode times: ${problems.slice(0, 3).join('; ')}`);
}
