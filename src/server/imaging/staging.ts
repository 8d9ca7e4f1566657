// The staging tree that `mke2fs -d` copies into the filesystem: the manifest and every software file
// at its destination with its mode. Everything is checked before the first write, and every path is
// built from checked segments under a directory this module created, so nothing lands outside it.
import { constants } from 'node:fs';
import { chmod, copyFile, mkdir, stat, writeFile } from 'node:fs/promises';
import { join, relative, isAbsolute } from 'node:path';
import { AbortedError } from '../../errors';
import { destinationSegments, parseRights } from './destination';
import { ImagingError } from './errors';

/** A software file of the appliance (a `SoftwareFile` artifact: `rights`, `ownerGroup`). */
export interface ImageFile {
  /** Path of the file on this host. */
  readonly source: string;
  /** Path inside the image, e.g. `/opt/app/bin/tool`. */
  readonly destination: string;
  /** Octal mode such as `"0755"`; `0644` when absent. */
  readonly rights?: string;
  /** Accepted and not applied: every file is owned by root 0:0 (see README "Image builder"). */
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

export interface StagedTree {
  /** Image paths (`/etc`, `/etc/appliance-forge`, …) of every directory and file staged, parents first. */
  readonly paths: string[];
  /** Bytes of file content staged. */
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

/** Lay out the manifest and files under `stagingDir` (an empty directory this build created). */
export async function stageTree(
  stagingDir: string,
  files: readonly ImageFile[],
  manifest: string,
  signal?: AbortSignal,
): Promise<StagedTree> {
  const planned = plan(files, manifest);
  const bytes = await checkSources(planned);
  const paths: string[] = [];
  const made = new Set<string>();
  for (const p of planned) {
    if (signal?.aborted) throw new AbortedError('image build aborted');
    for (let i = 1; i <= p.segments.length; i++) {
      const imagePath = '/' + p.segments.slice(0, i).join('/');
      const hostPath = join(stagingDir, ...p.segments.slice(0, i));
      const rel = relative(stagingDir, hostPath);
      // Defence in depth: the segments were checked, so this cannot happen.
      if (rel.startsWith('..') || isAbsolute(rel)) throw new ImagingError('input', `refused destination ${imagePath}: outside the image`);
      if (i < p.segments.length) {
        if (made.has(imagePath)) continue;
        await mkdir(hostPath);
        await chmod(hostPath, DIR_MODE); // explicit: the process umask must not decide the image's modes
        made.add(imagePath);
      } else if ('text' in p.content) {
        await writeFile(hostPath, p.content.text, { flag: 'wx' });
        await chmod(hostPath, p.mode);
      } else {
        await copyFile(p.content.source, hostPath, constants.COPYFILE_EXCL);
        await chmod(hostPath, p.mode);
      }
      paths.push(imagePath);
    }
  }
  return { paths, bytes };
}
