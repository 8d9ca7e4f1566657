// The time side of a reproducible image (docs/images.md "Reproducible images"): every time written into the
// image is the build's SOURCE_DATE_EPOCH or older. The tools that honour the variable get it
// (mmdebstrap, dpkg, initramfs-tools, the shadow tools, mkfs.fat, mtools); e2fsprogs 1.47.0 takes
// E2FSPROGS_FAKE_TIME for its own times but copies each file's ctime and atime from the tree, so the
// tree is clamped before `mke2fs -d` and the inodes' ctime, atime and crtime set afterwards.
import { createHash } from 'node:crypto';
import { digestFile } from '../digest';
import type { Sandbox } from '../host/sandbox';
import type { BuildImageOptions } from './disk/build-options';
import { ImagingError } from './errors';
import { runTool, runToolOutput } from './run';
import type { ImageFile } from './system/staging';
import type { InstalledPackage, OsLayerSpec, SystemSettings } from './stages';

export type Reproducible = NonNullable<BuildImageOptions['reproducible']>;

/** The environment of a tool that writes times into the image; empty when the build is not reproducible. */
export function reproducibleEnv(r: Reproducible | undefined): Record<string, string> {
  if (r === undefined) return {};
  const epoch = String(r.sourceDateEpoch);
  return { SOURCE_DATE_EPOCH: epoch, E2FSPROGS_FAKE_TIME: epoch };
}

/**
 * Just before `mke2fs -d`: every entry of the tree modified after the epoch (what the build itself
 * wrote: package scripts, settings, grub.cfg) gets the epoch as its mtime; older ones keep the time
 * their package gave them. Links are touched themselves, never followed.
 */
export async function clampTreeTimes(tree: string, r: Reproducible | undefined, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
  if (r === undefined) return;
  const at = `@${r.sourceDateEpoch}`;
  // cwd the tree: find goes back to its starting folder, which the namespace's root may not reach (a user's 0700 folder).
  await runTool('find', [tree, '-xdev', '-newermt', at, '-exec', 'touch', '--no-dereference', '--no-create', '-m', '-d', at, '--', '{}', '+'], { cwd: tree, signal, sandbox });
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
export async function pinInodeTimes(cwd: string, device: string, r: Reproducible | undefined, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
  if (r === undefined) return;
  const header = await runToolOutput('dumpe2fs', ['-h', device], { cwd, signal, sandbox });
  const { stderr } = await runTool('debugfs', ['-w', '-f', '-', device], { cwd, signal, sandbox, input: inodeTimesScript(usedInodes(header), r.sourceDateEpoch), env: reproducibleEnv(r) });
  // debugfs exits 0 whatever a command says: anything but its banner on stderr is a failure.
  const problems = stderr.split('\n').filter((l) => l.trim() !== '' && !/^debugfs \d/.test(l));
  if (problems.length > 0) throw new ImagingError('tool', `debugfs could not set the inode times: ${problems.slice(0, 3).join('; ')}`);
}

/** Every input of an image: what the seed is a digest of. */
export interface ImageInputs {
  readonly os: OsLayerSpec;
  /** The package versions the layer resolved (dpkg-query). */
  readonly installed: readonly InstalledPackage[];
  readonly sourceDateEpoch: number;
  readonly settings: SystemSettings;
  readonly files: readonly ImageFile[];
  /** The manifest as it would be written without its `reproducible` field. */
  readonly manifest: string;
  readonly disk: string;
  readonly compress: boolean;
}

/** The seed of a build: sha256 of the canonical inputs, the software files by content (their host paths do not count). */
export async function imageSeed(i: ImageInputs, signal?: AbortSignal): Promise<string> {
  const files = [];
  for (const f of i.files) {
    const { sha256 } = await digestFile(f.source, ['sha256'], signal ? { signal } : {});
    files.push({ destination: f.destination, rights: f.rights ?? null, ownerGroup: f.ownerGroup ?? null, sha256 });
  }
  const canonical = {
    v: 1,
    os: { ...i.os, mirror: { archive: i.os.mirror.archive, security: i.os.mirror.security ?? null } },
    installed: i.installed.map((p) => `${p.name}:${p.arch}=${p.version}`),
    sourceDateEpoch: i.sourceDateEpoch,
    settings: i.settings,
    files,
    manifest: i.manifest,
    disk: i.disk,
    compress: i.compress,
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** The manifest's `reproducible` field: which inputs were pinned, and how to build the same bytes again. */
export interface ReproducibleRecord {
  readonly seed: string;
  readonly sourceDateEpoch: number;
  readonly sourceDateEpochFrom: string;
  /** `snapshot`: every source is a dated snapshot, which serves the same versions later; a live mirror moves on. */
  readonly mirror: { readonly archive: string; readonly security: string | null; readonly snapshot: boolean };
  /** `name=version` the template pins; every other version is what the mirror served (the manifest's `installed`). */
  readonly pinnedPackages: readonly string[];
}

/** snapshot.debian.org, or a copy of its layout (a `YYYYMMDDTHHMMSSZ` folder). */
const SNAPSHOT = /^https?:\/\/snapshot\.|\/\d{8}T\d{6}Z(\/|$)/;

export function reproducibleRecord(os: OsLayerSpec, r: Reproducible): ReproducibleRecord {
  const { archive, security } = os.mirror;
  return {
    seed: r.seed,
    sourceDateEpoch: r.sourceDateEpoch,
    sourceDateEpochFrom: "the newest Date of the mirror's InRelease files",
    mirror: { archive, security: security ?? null, snapshot: [archive, ...(security ? [security] : [])].every((u) => SNAPSHOT.test(u)) },
    pinnedPackages: os.packages.filter((p) => p.version !== undefined).map((p) => `${p.name}=${p.version!}`),
  };
}
