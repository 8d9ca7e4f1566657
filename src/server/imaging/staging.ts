// The appliance's own files in the image tree: the manifest and every software file at its
// destination with its mode and owner. Everything is checked before the first write, and every path
// is built from checked segments resolved inside the tree, so nothing lands outside it.
import { constants } from 'node:fs';
import { chmod, copyFile, lchown, lstat, mkdir, stat, unlink, writeFile } from 'node:fs/promises';
import { join, relative, isAbsolute } from 'node:path';
import { AbortedError } from '../../errors';
import { destinationSegments, parseRights } from './destination';
import { ImagingError } from './errors';
import { readAccounts, resolveOwner, resolveParent } from './tree';

/** A software file of the appliance (a `SoftwareFile` artifact: `rights`, `ownerGroup`). */
export interface ImageFile {
  /** Path of the file on this host. */
  readonly source: string;
  /** Path inside the image, e.g. `/opt/app/bin/tool`. */
  readonly destination: string;
  /** Octal mode such as `"0755"`; `0644` when absent. */
  readonly rights?: string;
  /** `user:group` (or `user`) of the image; root 0:0 when absent. */
  readonly ownerGroup?: string;
}

/** Where the appliance manifest is written in every image. */
export const MANIFEST_PATH = '/etc/appliance-forge/manifest.json';

const DIR_MODE = 0o755;

interface Planned {
  readonly segments: string[];
  readonly mode: number;
  readonly content: { source: string } | { text: string };
}

export interface PlacedFiles {
  /** Bytes of file content written. */
  readonly bytes: number;
}

/** Check the whole list: destinations, modes, no duplicate, no file used as a directory. */
function plan(files: readonly ImageFile[], manifest: string): Planned[] {
  const planned: Planned[] = [
    { segments: destinationSegments(MANIFEST_PATH), mode: 0o644, content: { text: manifest } },
    ...files.map((f) => ({
      segments: destinationSegments(f.destination),
      mode: parseRights(f.rights, f.destination),
      content: { source: f.source },
    })),
  ];
  const kinds = new Map<string, 'file' | 'dir'>();
  for (const p of planned) {
    const path = '/' + p.segments.join('/');
    for (let i = 1; i < p.segments.length; i++) {
      const dir = '/' + p.segments.slice(0, i).join('/');
      if (kinds.get(dir) === 'file') throw new ImagingError('input', `refused destination ${path}: ${dir} is already a file`);
      kinds.set(dir, 'dir');
    }
    const seen = kinds.get(path);
    if (seen !== undefined) {
      const what = path === MANIFEST_PATH ? 'the appliance manifest' : seen === 'dir' ? 'a directory of another file' : 'another file';
      throw new ImagingError('input', `refused destination ${path}: it is already ${what}`);
    }
    kinds.set(path, 'file');
  }
  return planned;
}

/** Each source must be a readable regular file; returns their total size. */
async function checkSources(planned: readonly Planned[]): Promise<number> {
  let bytes = 0;
  for (const p of planned) {
    if ('text' in p.content) {
      bytes += Buffer.byteLength(p.content.text);
      continue;
    }
    const source = p.content.source;
    const st = await stat(source).catch((e: NodeJS.ErrnoException) => {
      throw new ImagingError('input', `source of /${p.segments.join('/')} cannot be read (${e.code ?? e.message}): ${source}`, e);
    });
    if (!st.isFile()) throw new ImagingError('input', `source of /${p.segments.join('/')} is not a regular file: ${source}`);
    bytes += st.size;
  }
  return bytes;
}

/**
 * Write the manifest and the software files into `tree` (a private copy of the OS layer), after its
 * users and groups exist: each file with its mode and owner (`ownerGroup` names resolved in the
 * image's own /etc/passwd and /etc/group; root when absent). Parent directories are followed as the
 * image sees them (see tree.ts) and created 0755 root when missing; an existing file is replaced.
 */
export async function placeFiles(tree: string, files: readonly ImageFile[], manifest: string, signal?: AbortSignal): Promise<PlacedFiles> {
  const planned = plan(files, manifest);
  const bytes = await checkSources(planned);
  const accounts = await readAccounts(tree);
  const owners = planned.map((p, i) => {
    const og = i === 0 ? undefined : files[i - 1]!.ownerGroup;
    return og === undefined || og === '' ? { uid: 0, gid: 0 } : resolveOwner(accounts, og, '/' + p.segments.join('/'));
  });
  for (const [i, p] of planned.entries()) {
    if (signal?.aborted) throw new AbortedError('image build aborted');
    const imagePath = '/' + p.segments.join('/');
    const { dir, missing } = await resolveParent(tree, p.segments);
    for (const m of missing) {
      dir.push(m);
      await mkdir(join(tree, ...dir));
      await chmod(join(tree, ...dir), DIR_MODE); // explicit: the process umask must not decide the image's modes
    }
    const hostPath = join(tree, ...dir, p.segments[p.segments.length - 1]!);
    const rel = relative(tree, hostPath);
    // Defence in depth: resolveParent stays in the tree, so this cannot happen.
    if (rel.startsWith('..') || isAbsolute(rel)) throw new ImagingError('input', `refused destination ${imagePath}: outside the image`);
    const existing = await lstat(hostPath).catch(() => undefined);
    if (existing?.isDirectory()) throw new ImagingError('input', `refused destination ${imagePath}: it is a directory in the image`);
    if (existing) await unlink(hostPath); // a file or a link of the OS: replaced, never written through
    if ('text' in p.content) await writeFile(hostPath, p.content.text, { flag: 'wx' });
    else await copyFile(p.content.source, hostPath, constants.COPYFILE_EXCL);
    await lchown(hostPath, owners[i]!.uid, owners[i]!.gid);
    await chmod(hostPath, p.mode); // after chown, which clears set-id bits
  }
  return { bytes };
}
