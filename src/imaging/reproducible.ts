// The time side of a reproducible image (docs/images.md "Reproducible images"): every time written into the
// image is the build's SOURCE_DATE_EPOCH or older. The tools that honour the variable get it
// (mmdebstrap, dpkg, initramfs-tools, the shadow tools, mkfs.fat, mtools); the root filesystem's
// times are pinned by the disk stage (disk/times.ts). Here: the seed and the manifest's record.
import { createHash } from 'node:crypto';
import { digestFile } from '../digest';
import type { BuildImageOptions } from './disk/build-options';
import type { ImageFile } from './system/staging';
import type { InstalledPackage, OsLayerSpec, SystemSettings } from './stages';

export type Reproducible = NonNullable<BuildImageOptions['reproducible']>;

/** The environment of a tool that writes times into the image; empty when the build is not reproducible. */
export function reproducibleEnv(r: Reproducible | undefined): Record<string, string> {
  if (r === undefined) return {};
  const epoch = String(r.sourceDateEpoch);
  return { SOURCE_DATE_EPOCH: epoch, E2FSPROGS_FAKE_TIME: epoch };
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
