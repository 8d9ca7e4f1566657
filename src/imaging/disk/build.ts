// buildImage: the OS layer copied → settings and the appliance's files applied → bootable raw disk
// (GPT, GRUB for BIOS and UEFI, ext4) → target format → the output file, written under a temporary name beside it and renamed only when complete
// (docs/contracts.md "Imaging"). Whatever happens, the work directory is removed, and on failure
// or abort the temporary output too; an existing `outFile` is only replaced by a finished image.
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, lchown, lstat, mkdir, mkdtemp, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AbortedError } from '../../errors';
import { currentBuildHost, type BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import { checkFree, diskTooSmall, writeBootableRaw } from './bootdisk';
import { ACCOUNT_FILES, BaseDiskCache, baseKey, baseSeed, type AccountFile, type BaseMeta } from './base-disk';
import { applyPasswords, hasPasswords, withoutPasswords } from '../system/accounts';
import { reproducibleEnv } from '../reproducible';
import { rootBytes } from './gpt';
import { writeImageFiles } from './image-files';
import { planFiles, type PlacedFile } from '../system/staging';
import { indexTree, parseAccounts } from '../tree';
import type { DiskFormat } from '../formats';
import { digestFile, writeDigested, type Digests } from './output';
import { reporter, type ProgressSink, type Reporter } from '../progress';
import { qcow2FromRaw } from './qcow2';
import { qemuConvert } from './qemu';
import { runTool } from '../run';
import { applySettings } from '../system/apply';
import { buildInNamespace } from './in-namespace';
import type { BuildImageOptions, BuiltImage } from './build-options';
export type { BuildImageOptions, BuiltImage } from './build-options';
import { copyTree } from '../tree';
import { copyAcross } from '../os/layer-archive';
import { imageSboms, listedFiles, readTreeContents } from '../sbom';
import { processOwner } from '../../host/process-owner';
import { removeTree } from '../os/mmdebstrap';
import { memoryFolder } from '../memory-folder';
import { MAX_DISK_MIB, MIN_DISK_MIB } from '../../model/limits';
import { timed } from '../stage-log';

const MiB = 1024 * 1024;
export { MAX_DISK_MIB, MIN_DISK_MIB };
const DISKS: readonly DiskFormat[] = ['raw', 'qcow2', 'vmdk', 'vhd', 'vdi'];


async function checkOptions(o: BuildImageOptions): Promise<void> {
  const bad = (m: string): never => {
    throw new ImagingError('input', m);
  };
  if (!DISKS.includes(o.disk)) bad(`unknown disk format ${JSON.stringify(o.disk)} (expected one of ${DISKS.join(', ')})`);
  const diskMiB = o.settings?.diskMiB;
  if (!Number.isSafeInteger(diskMiB) || diskMiB < MIN_DISK_MIB || diskMiB > MAX_DISK_MIB) {
    bad(`disk size must be a whole number of MiB from ${MIN_DISK_MIB} to ${MAX_DISK_MIB}, got ${String(diskMiB)}`);
  }
  if (typeof o.manifest !== 'string') bad('the manifest must be a string');
  if (!Array.isArray(o.files)) bad('files must be a list');
  const layer = await stat(o.layerDir).catch(() => undefined);
  if (!layer?.isDirectory()) bad(`the OS layer is not a directory: ${o.layerDir}`);
  const outDir = await stat(dirname(o.outFile)).catch(() => undefined);
  if (!outDir?.isDirectory()) bad(`the directory of the output file does not exist: ${dirname(o.outFile)}`);
  if (basename(o.outFile) === '') bad('the output file has no name');
}

function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) throw new AbortedError('image build aborted');
}

/** Map this build's 0..100 onto the caller's range. */
function ranged(sink: ProgressSink | undefined, range: { from: number; to: number } | undefined): ProgressSink | undefined {
  if (!sink || !range) return sink;
  const { from, to } = range;
  return (p) => sink({ ...p, percentage: Math.floor(from + ((to - from) * p.percentage) / 100) });
}

/** The host a build runs on, or why it cannot run (before anything is written). */
function hostOf(o: BuildImageOptions): BuildHost {
  const host = o.host ?? currentBuildHost();
  const problem = host.problem;
  if (problem !== undefined) throw new ImagingError('prerequisite', problem);
  host.assertReachable(o.workDir, 'build folder');
  return host;
}

export async function buildImage(o: BuildImageOptions): Promise<BuiltImage> {
  checkAbort(o.signal);
  await checkOptions(o);
  const host = hostOf(o);
  if (host.ownNamespace) return buildInNamespace(o, host);
  const progress = reporter(ranged(o.onProgress, o.progressRange));
  const diskBytes = o.settings.diskMiB * MiB;
  progress.stage(0, 0, 'making the base disk');
  await mkdir(o.workDir, { recursive: true });
  // Named for this process, so the cache's sweep removes it after a crash and never while it runs.
  const buildDir = await mkdtemp(join(o.workDir, `${processOwner()}-image-`));
  const partOut = join(dirname(o.outFile), `.${basename(o.outFile)}.${randomUUID().slice(0, 8)}.part`);
  try {
    // The namespace's root writes the tree and the disk here.
    await host.own(buildDir);
    // The raw disk is made in the work dir (reachable from the namespace), every other disk from it.
    const rawPath = join(buildDir, 'disk.raw');
    const base = await timed('base disk', () => baseDisk(o, host, buildDir, rawPath, progress));
    checkAbort(o.signal);
    progress.stage(50, 50, 'writing the software files');
    const text = (name: string): string => base.accountFiles.find((f) => f.name === name)?.text ?? '';
    const planned = await planFiles(o.files, o.manifest, parseAccounts(text('passwd'), text('group')));
    const placed = [...(await passwordFiles(o, base, host, buildDir)), ...planned.placed];
    const bytes = planned.bytes;
    const reserve = o.settings.swapMiB * MiB;
    const tooSmall = diskTooSmall(base.treeBytes + bytes, o.settings.swapMiB, o.settings.diskMiB);
    if (base.treeBytes + bytes + reserve > rootBytes(diskBytes)) throw tooSmall('');
    await host.own(rawPath);
    try {
      await timed('writing the software files', () => writeImageFiles({ rawName: basename(rawPath), scratchDir: buildDir, index: { ...base.index }, files: placed, reproducible: o.reproducible, host, signal: o.signal }));
    } catch (e) {
      throw e instanceof ImagingError && e.kind === 'disk-full' ? tooSmall(` (${e.message})`, e) : e;
    }
    if (reserve > 0) await checkFree(rawPath, reserve, tooSmall, host, o.signal);
    // What the SBOMs list: the base's packages, the files by their sources; they name the finished image's digest.
    const contents = { ...base.contents, files: await listedFiles(o.files) };
    if (o.disk === 'raw' && !o.compress) await moveFile(rawPath, partOut, o.signal);
    progress.stage(50, 50, `converting to ${o.disk}`);
    checkAbort(o.signal);

    const digests = await timed(`writing the ${o.disk} file`, () => writeDisk(o, rawPath, partOut, buildDir, diskBytes, progress));
    checkAbort(o.signal);
    await rename(partOut, o.outFile);
    progress.stage(100, 100, 'image ready', 1, { done: digests.fileSize, total: digests.fileSize });
    const createdEpoch = o.reproducible?.sourceDateEpoch ?? Math.floor(Date.now() / 1000);
    return { ...digests, virtualSizeBytes: diskBytes, sbom: imageSboms(contents, { fileName: o.imageName ?? basename(o.outFile), sha256: digests.sha256, createdEpoch }) };
  } catch (e) {
    await unlink(partOut).catch(() => undefined);
    throw o.signal?.aborted && !(e instanceof AbortedError) ? new AbortedError('image build aborted') : e;
  } finally {
    await rm(buildDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * The image's base disk at `rawPath`: from the cache when a reproducible build of the same layer and
 * settings made it before, else made (layer copied, settings applied, bootable disk written) and kept.
 * Its disk ids and times come from its own key, so a base is the same bytes whichever image asked for it.
 */
/** The layer's tree copied to `tree` (which does not exist yet) in `host`'s namespace: straight, or across from the layer's. */
async function copyLayer(o: BuildImageOptions, tree: string, host: BuildHost): Promise<void> {
  const from = o.layerHost ?? host;
  if (from.owners === host.owners) return copyTree(o.layerDir, tree, host, o.signal);
  await mkdir(tree);
  await host.own(tree);
  await copyAcross(o.layerDir, from, tree, host, o.signal);
}

async function baseDisk(o: BuildImageOptions, host: BuildHost, buildDir: string, rawPath: string, progress: Reporter): Promise<BaseMeta> {
  const cache = o.baseCache && o.reproducible ? new BaseDiskCache(o.baseCache.dir, o.baseCache.maxBytes) : undefined;
  const key = cache && o.reproducible ? baseKey({ layerKey: o.baseCache!.layerKey, settings: withoutPasswords(o.settings), cloudInit: o.cloudInit, reproducible: o.reproducible, host }) : undefined;
  if (cache && key) {
    const hit = await timed('looking for a cached base disk', () => cache.take(key, rawPath, o.signal));
    if (hit) {
      progress.stage(0, 50, 'base disk ready (from the cache)', 1);
      return hit;
    }
  }
  const portableKey = o.baseCache?.portableKey;
  const seed = key && o.reproducible && portableKey ? baseSeed({ portableKey, settings: withoutPasswords(o.settings), cloudInit: o.cloudInit, reproducible: o.reproducible }) : key;
  const reproducible = o.reproducible && { seed: seed ?? o.reproducible.seed, sourceDateEpoch: o.reproducible.sourceDateEpoch };
  const settings = withoutPasswords(o.settings);
  // The copy lives a few seconds: in memory when there is room (../memory-folder.ts), else on disk.
  const memory = o.layerBytes === undefined ? undefined : await memoryFolder(o.layerBytes, host);
  const tree = join(memory ?? buildDir, 'root');
  let made: Omit<BaseMeta, 'key'>;
  try {
    await timed(`copying the OS layer${memory ? ' (to memory)' : ''}`, () => copyLayer(o, tree, host));
    progress.stage(0, 20, 'applying settings', 0.5);
    checkAbort(o.signal);
    await timed('applying settings', () => applySettings(tree, { settings, cloudInit: o.cloudInit, signal: o.signal, host, reproducible }));
    checkAbort(o.signal);
    const { treeBytes } = await timed('writing the bootable disk', () => writeBootableRaw({
      tree, rawPath, diskMiB: o.settings.diskMiB, kernelParams: o.settings.kernelParams, reserveMiB: o.settings.swapMiB,
      scratchDir: buildDir, signal: o.signal, host, reproducible,
      onProgress: (f, m) => progress.stage(20, 50, `writing the disk: ${m}`, f),
    }));
    const [index, accountFiles, contents] = await timed('reading the tree (index, accounts, SBOM contents)', () => Promise.all([indexTree(tree), readAccountFiles(tree, host), readTreeContents(tree)]));
    made = { treeBytes, index, accountFiles, contents };
  } finally {
    await timed('removing the tree', () => (memory ? removeTree(memory, host) : rm(tree, { recursive: true, force: true })));
  }
  const meta: BaseMeta = { key: key ?? '', ...made };
  if (cache && key) await timed('keeping the base disk', () => cache.put(meta, rawPath, o.signal));
  return meta;
}

/** The account files of the tree's /etc that are regular files, with their image owners. */
async function readAccountFiles(tree: string, host: BuildHost): Promise<AccountFile[]> {
  const out: AccountFile[] = [];
  for (const name of ACCOUNT_FILES) {
    const path = join(tree, 'etc', name);
    const st = await lstat(path).catch(() => undefined);
    if (!st?.isFile()) continue;
    out.push({ name, text: await readFile(path, 'utf8'), mode: st.mode & 0o7777, uid: host.imageId(st.uid, 'uid'), gid: host.imageId(st.gid, 'gid') });
  }
  return out;
}

/**
 * The password hashes, which are salted anew at each build and so never in a base: the image's shadow
 * tools run on a copy of the base's account files, and the /etc/shadow they leave is written with the
 * software files.
 */
async function passwordFiles(o: BuildImageOptions, base: BaseMeta, host: BuildHost, buildDir: string): Promise<PlacedFile[]> {
  if (!hasPasswords(o.settings)) return [];
  const etc = join(buildDir, 'accounts', 'etc');
  await mkdir(etc, { recursive: true });
  for (const d of [dirname(etc), etc]) await host.own(d);
  for (const f of base.accountFiles) {
    const path = join(etc, f.name);
    await writeFile(path, f.text, { flag: 'wx', mode: 0o600 });
    await lchown(path, host.hostId(f.uid, 'uid'), host.hostId(f.gid, 'gid'));
    await chmod(path, f.mode);
  }
  await applyPasswords(dirname(etc), o.settings, host, o.signal, reproducibleEnv(o.reproducible));
  const shadow = base.accountFiles.find((f) => f.name === 'shadow');
  if (shadow === undefined) throw new ImagingError('input', 'the OS tree has no /etc/shadow for the password hashes');
  const text = await readFile(join(etc, 'shadow'), 'utf8');
  return [{ segments: ['etc', 'shadow'], mode: shadow.mode, owner: { uid: shadow.uid, gid: shadow.gid }, content: { text } }];
}

/** Percentages 50..98: the target format, compressed or not, digested on the way. */
async function writeDisk(o: BuildImageOptions, rawPath: string, partOut: string, buildDir: string, diskBytes: number, progress: Reporter): Promise<Digests> {
  const { signal, compress } = o;
  const written = (from: number, to: number, message: string, total: number) => (n: number) =>
    progress.stage(from, to, message, n / total, { done: n, total });
  switch (o.disk) {
    case 'raw':
      if (!compress) return digestFile(partOut, signal, written(50, 98, 'computing checksums', diskBytes));
      return writeDigested(readCounted(rawPath, written(50, 98, 'compressing the disk', diskBytes)), partOut, { compress, signal });
    case 'qcow2': {
      const chunks = qcow2FromRaw(rawPath, diskBytes, {
        signal,
        // The plain write copies each chunk at once; gzip may still hold one while the next is read.
        reuseBuffer: !compress,
        onProgress: (p) =>
          p.phase === 'scan'
            ? progress.stage(50, 70, 'finding the used clusters', p.done / p.total, p)
            : progress.stage(70, 98, 'converting to qcow2', p.done / p.total, p),
      });
      return writeDigested(chunks, partOut, { compress, signal });
    }
    case 'vmdk':
    case 'vhd':
    case 'vdi': {
      const converted = compress ? join(buildDir, `disk.${o.disk}`) : partOut;
      await qemuConvert(rawPath, converted, o.disk, {
        signal,
        onFraction: (f) => progress.stage(50, 80, `converting to ${o.disk} (qemu-img)`, f),
      });
      checkAbort(signal);
      const size = (await stat(converted)).size;
      if (!compress) return digestFile(converted, signal, written(80, 98, 'computing checksums', size));
      return writeDigested(readCounted(converted, written(80, 98, 'compressing the disk', size)), partOut, { compress, signal });
    }
  }
}

/** Rename, or copy keeping holes when the work dir is on another filesystem than the output. */
async function moveFile(from: string, to: string, signal?: AbortSignal): Promise<void> {
  try {
    await rename(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    await runTool('cp', ['--sparse=always', '--', from, to], { signal });
    await unlink(from);
  }
}

/** A file's bytes, counting them as they are read (progress of a compression, whose output size is unknown). */
async function* readCounted(path: string, onRead: (n: number) => void): AsyncGenerator<Buffer> {
  let n = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const b = chunk as Buffer;
    n += b.length;
    onRead(n);
    yield b;
  }
}
