// The appliance's own files in the image tree: the manifest and every software file at its
// destination with its mode and owner. Everything is checked before the first write, and every path
// is built from checked segments resolved inside the tree, so nothing lands outside it.
import { stat } from 'node:fs/promises';
import { AbortedError } from '../../errors';
import { destinationSegments, parseRights } from './destination';
import { ImagingError } from '../errors';
import { readAccounts, resolveOwner, type Accounts } from '../tree';
import type { TreeWriter } from './tree-writer';

/** A software file of the appliance (a `SoftwareFile` artifact: `rights`, `ownerGroup`). */
export interface ImageFile {
  /** Path of the file on this host. */
  readonly source: string;
  /** Path inside the image, e.g. `/opt/app/bin/tool`. */
  readonly destination: string;
  /** Octal mode such as `"0755"`; `0644` when absent. */
  readonly rights?: string | undefined;
  /** `user:group` (or `user`) of the image; root 0:0 when absent. */
  readonly ownerGroup?: string | undefined;
}

/** Where the appliance manifest is written in every image. */
export const MANIFEST_PATH = '/etc/appliance-forge/manifest.json';

export interface Planned {
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

/** A file to place: where (checked segments), its mode and numeric owner in the image, and its content. */
export interface PlacedFile extends Planned {
  readonly owner: { readonly uid: number; readonly gid: number };
}

/**
 * The manifest and the software files, checked (destinations, modes, sources) and given their owners
 * (`ownerGroup` names resolved in the image's own accounts; root when absent), in the order they are written.
 */
export async function planFiles(files: readonly ImageFile[], manifest: string, accounts: Accounts): Promise<{ placed: PlacedFile[]; bytes: number }> {
  const planned = plan(files, manifest);
  const bytes = await checkSources(planned);
  const placed = planned.map((p, i) => {
    const og = i === 0 ? undefined : files[i - 1]!.ownerGroup;
    return { ...p, owner: og === undefined || og === '' ? { uid: 0, gid: 0 } : resolveOwner(accounts, og, '/' + p.segments.join('/')) };
  });
  return { placed, bytes };
}

/**
 * Write the manifest and the software files into the writer's tree (a private copy of the OS layer),
 * after its users and groups exist: each file with its mode and owner. Parent directories are followed
 * as the image sees them and created 0755 root when missing (tree-writer.ts); an existing file is replaced.
 */
export async function placeFiles(w: TreeWriter, files: readonly ImageFile[], manifest: string, signal?: AbortSignal): Promise<PlacedFiles> {
  const { placed, bytes } = await planFiles(files, manifest, await readAccounts(w.root));
  for (const p of placed) {
    if (signal?.aborted) throw new AbortedError('image build aborted');
    if ('text' in p.content) await w.writeText(p.segments, p.content.text, p.mode, p.owner);
    else await w.copyIn(p.content.source, p.segments, p.mode, p.owner);
  }
  return { bytes };
}
