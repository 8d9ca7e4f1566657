// One suite of a mirror (`bookworm`, `bookworm-security`…): its verified InRelease and its
// `main/binary-ARCH/Packages` index, downloaded once into a cache and reused while InRelease lists
// the same SHA-256. Also apt's own lists, for building the catalog from what `apt-get update` fetched.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { exitWords, start } from '../host/child';
import { missingTools, toolsMissingMessage } from '../host/tools';
import { DEFAULT_PLATFORM } from '../model/platforms';
import { DebianIndexError } from './errors';
import { fetchSmall, fetchVerified } from './fetch';
import { DEBIAN_KEYRING, parseRelease, verifyInRelease, type ReleaseFile } from './release';

export interface SuiteSource {
  /** Root of the archive, e.g. `http://deb.debian.org/debian`. */
  readonly mirror: string;
  readonly suite: string;
  readonly component?: string;
  readonly arch?: string;
}

/** A suite ready to read: its release and a way to stream its Packages text. */
export interface SuiteIndex {
  readonly release: ReleaseFile;
  /** Where the index came from, for the catalog's `#source`. */
  readonly source: string;
  open(): Readable;
}

export interface FetchSuiteOptions {
  /** Downloaded files are kept here, one folder per mirror and suite. */
  readonly cacheDir: string;
  readonly keyring?: string;
  readonly signal?: AbortSignal;
}

const MAX_INRELEASE_BYTES = 1 << 20;

/** Fetches and verifies a suite's InRelease, then its Packages index unless the cached one still matches. */
export async function fetchSuite(src: SuiteSource, o: FetchSuiteOptions): Promise<SuiteIndex> {
  const mirror = src.mirror.replace(/\/+$/, '');
  const listPath = `${src.component ?? 'main'}/binary-${src.arch ?? DEFAULT_PLATFORM.debianArch}/Packages`;
  const base = `${mirror}/dists/${src.suite}`;
  const signed = await fetchSmall(`${base}/InRelease`, MAX_INRELEASE_BYTES, o.signal);
  const release = parseRelease(await verifyInRelease(signed, o.keyring ?? DEBIAN_KEYRING));
  // A genuine InRelease of another suite (a misconfigured mirror, a replay) is refused, as apt does.
  if (release.codename !== src.suite) {
    throw new DebianIndexError('malformed', `${base}/InRelease is signed for codename ${JSON.stringify(release.codename)}, not ${src.suite}`);
  }
  const variant = pickVariant(release, listPath);
  if (!variant) throw new DebianIndexError('malformed', `${base}/InRelease lists no ${listPath}[.xz|.gz]${hasXz() ? '' : ' this host can read (install xz-utils for .xz)'}`);
  const dir = join(o.cacheDir, cacheName(mirror, src.suite));
  await mkdir(dir, { recursive: true });
  const file = join(dir, variant.path.replaceAll('/', '_'));
  if (!(await matches(file, variant.sha256))) await fetchVerified(`${base}/${variant.path}`, file, variant, o.signal);
  // Kept for inspection (what the cached index was checked against); written like the index, atomically.
  const tmp = `${join(dir, 'InRelease')}.${process.pid}.tmp`;
  await writeFile(tmp, signed);
  await rename(tmp, join(dir, 'InRelease'));
  return { release, source: `${base}/${variant.path}`, open: () => decompress(file, variant.path) };
}

/**
 * A suite from apt's lists folder. apt checked InRelease and every index before it put them there (a file
 * that fails is never moved in), so they are read as they are; apt-helper decompresses any format.
 */
export async function aptListsSuite(listsDir: string, files: readonly string[], suite: string): Promise<SuiteIndex | undefined> {
  const packages = files.find((f) => f.includes(`_dists_${suite}_main_binary-${DEFAULT_PLATFORM.debianArch}_Packages`));
  const inRelease = files.find((f) => f.endsWith(`_dists_${suite}_InRelease`)) ?? files.find((f) => f.endsWith(`_dists_${suite}_Release`));
  if (!packages || !inRelease) return undefined;
  const release = parseRelease(await readFile(join(listsDir, inRelease), 'utf8'));
  return { release, source: packages, open: () => toolOutput('/usr/lib/apt/apt-helper', ['cat-file', join(listsDir, packages)]) };
}

interface Variant {
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
}

/** `.xz` (smallest) when the xz tool is here, else `.gz` (Node's zlib), else the plain file. */
function pickVariant(release: ReleaseFile, listPath: string): Variant | undefined {
  const order = hasXz() ? ['.xz', '.gz', ''] : ['.gz', ''];
  for (const ext of order) {
    const e = release.sha256.get(`${listPath}${ext}`);
    if (e) return { path: `${listPath}${ext}`, ...e };
  }
  return undefined;
}

let xzPresent: boolean | undefined;
function hasXz(): boolean {
  xzPresent ??= ['/usr/bin/xz', '/bin/xz', '/usr/local/bin/xz'].some((p) => existsSync(p));
  return xzPresent;
}

function decompress(file: string, path: string): Readable {
  if (path.endsWith('.xz')) return toolOutput('xz', ['-dc', file]);
  const raw = createReadStream(file);
  return path.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
}

/** A tool's stdout as a stream that fails (instead of ending short) when the tool does. */
function toolOutput(cmd: string, args: string[]): Readable {
  if (missingTools([cmd]).length > 0) {
    const none = new Readable({ read: () => undefined });
    none.destroy(new DebianIndexError('missing-tool', toolsMissingMessage([cmd])));
    return none;
  }
  const child = start({ command: cmd, args });
  // readline ends on 'end'; a non-zero exit after the last byte must still fail the read.
  const check = child.exited.then((e) => {
    if (e.error !== undefined || e.code !== 0) throw new DebianIndexError('malformed', `${cmd} ${args.join(' ')} failed (${e.error?.message ?? exitWords(e)}): ${e.stderr}`);
  });
  const out = child.stdout;
  (out as Readable & { exited?: Promise<void> }).exited = check;
  check.catch(() => undefined);
  return out;
}

/** Waits for the tool behind a stream from `open()` (if any) and throws its failure. */
export async function closed(stream: Readable): Promise<void> {
  await (stream as Readable & { exited?: Promise<void> }).exited;
}

async function matches(file: string, sha256: string): Promise<boolean> {
  if (!existsSync(file)) return false;
  const h = createHash('sha256');
  await pipeline(createReadStream(file), h);
  return h.digest('hex') === sha256;
}

/** `deb.debian.org_debian-security_bookworm-security`, as apt names its lists. */
function cacheName(mirror: string, suite: string): string {
  return `${mirror.replace(/^[a-z]+:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_')}_${suite}`;
}
