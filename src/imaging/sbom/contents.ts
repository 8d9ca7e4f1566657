// What an image holds, as its SBOMs list it: the packages of its dpkg database with their licences,
// the distribution (os-release), and the appliance's own software files with their digests. The tree
// is the image's and may be hostile: every read goes through readTreeFile (no link followed out of it,
// sizes bounded) and is parsed here, never by a host tool.
import { digestFile } from '../../digest';
import { ImagingError } from '../errors';
import { destinationSegments } from '../system/destination';
import type { ImageFile } from '../system/staging';
import { DPKG_STATUS, parseDpkgStatus, type DebPackage } from './dpkg';
import { licenseOf, NOASSERTION } from './license';
import { readTreeFile } from './tree-read';

/** A status file of 60,000 packages (a whole desktop) is about 40 MiB. */
export const MAX_STATUS_BYTES = 64 * 1024 * 1024;
/** Larger copyright files exist (firmware, the kernel's): their licence is then left unasserted. */
export const MAX_COPYRIGHT_BYTES = 2 * 1024 * 1024;
const MAX_OS_RELEASE_BYTES = 64 * 1024;

export interface SbomPackage extends DebPackage {
  /** An SPDX licence expression, or NOASSERTION. */
  readonly license: string;
}

export interface SbomFile {
  /** Its path in the image. */
  readonly path: string;
  readonly sha256: string;
  readonly sha1: string;
}

export interface ImageContents {
  /** os-release `ID` and `VERSION_ID` (`debian`, `12`); undefined when the tree has no readable one. */
  readonly distro: { readonly id: string; readonly versionId: string } | undefined;
  readonly packages: readonly SbomPackage[];
  readonly files: readonly SbomFile[];
}

async function readStatus(tree: string): Promise<DebPackage[]> {
  const r = await readTreeFile(tree, DPKG_STATUS, MAX_STATUS_BYTES);
  if (r.ok) return parseDpkgStatus(r.bytes.toString('utf8'));
  // A tree without dpkg (not a Debian system) has no packages to list.
  if (r.why === 'missing') return [];
  if (r.why === 'too-large') throw new ImagingError('input', `the image's dpkg database ${DPKG_STATUS} is larger than ${MAX_STATUS_BYTES} bytes (${r.size ?? '?'}): refused`);
  throw new ImagingError('input', `the image's dpkg database ${DPKG_STATUS} is not a regular file (a link is never followed): refused`);
}

async function readLicense(tree: string, name: string): Promise<string> {
  const r = await readTreeFile(tree, `/usr/share/doc/${name}/copyright`, MAX_COPYRIGHT_BYTES);
  return r.ok ? licenseOf(r.bytes.toString('utf8')) : NOASSERTION;
}

/** os-release(5): `/etc/os-release` is usually a link to `/usr/lib/os-release`, which is read first. */
async function readDistro(tree: string): Promise<ImageContents['distro']> {
  for (const path of ['/usr/lib/os-release', '/etc/os-release']) {
    const r = await readTreeFile(tree, path, MAX_OS_RELEASE_BYTES);
    if (!r.ok) continue;
    const values = new Map<string, string>();
    for (const line of r.bytes.toString('utf8').split('\n')) {
      const m = /^([A-Z_][A-Z0-9_]*)=(?:"([^"\\`$]*)"|'([^']*)'|([^\s"'\\`$]*))\s*$/.exec(line);
      if (m) values.set(m[1]!, m[2] ?? m[3] ?? m[4] ?? '');
    }
    const id = values.get('ID') ?? '';
    const versionId = values.get('VERSION_ID') ?? '';
    if (/^[a-z0-9._-]{1,64}$/.test(id) && /^[A-Za-z0-9._~-]{1,64}$/.test(versionId)) return { id, versionId };
  }
  return undefined;
}

/** A software file's SHA-256 and SHA-1 (SPDX requires SHA-1 for files), by the project's one digester. */
async function digests(source: string): Promise<{ sha256: string; sha1: string }> {
  const { sha256, sha1 } = await digestFile(source, ['sha256', 'sha1']);
  return { sha256, sha1 };
}

/** The image's contents, read from its tree (before it is removed) and the appliance's file list. */
export async function readImageContents(tree: string, files: readonly ImageFile[]): Promise<ImageContents> {
  return { ...(await readTreeContents(tree)), files: await listedFiles(files) };
}

/** What the tree itself tells: its distribution and packages (an image's base disk keeps it). */
export async function readTreeContents(tree: string): Promise<Omit<ImageContents, 'files'>> {
  const debs = await readStatus(tree);
  const packages: SbomPackage[] = [];
  for (const p of debs) packages.push({ ...p, license: await readLicense(tree, p.name) });
  return { distro: await readDistro(tree), packages };
}

/** The appliance's software files with their digests, by path in the image. */
export async function listedFiles(files: readonly ImageFile[]): Promise<SbomFile[]> {
  const listed: SbomFile[] = [];
  for (const f of files) listed.push({ path: `/${destinationSegments(f.destination).join('/')}`, ...(await digests(f.source)) });
  return listed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
