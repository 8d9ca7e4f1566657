// The built images in the user's hands: `apply --output DIR` and the Action's `output-dir` download
// each image of an apply once, streamed to a temporary name and checked against the sha256 the
// service announced before it takes its name. A file already there with that sha256 is kept as is.
// Beside each image go its SBOMs (`NAME.spdx.json`, `NAME.cdx.json`), from the reference server's
// extension route; a service without it, or an image made before SBOMs were kept, has none.
import { mkdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { isForgeError } from '../errors';
import type { Client } from '../client';
import { ApiError } from '../client/errors';
import { digestFile } from '../digest';
import { SBOM_FORMATS, type SbomFormat } from '../model/sbom';
import { uriParams } from '../model/uris';
import type { ImageResult } from './apply';
import { ApplyError } from './errors';
import type { EventSink } from './events';

export interface SavedImage {
  /** Builders (indexes in the declaration) this file serves. */
  readonly builders: readonly number[];
  readonly format: string;
  readonly imageUri: string;
  /** Absolute path of the file. */
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
  /** The file was already there with the right sha256: nothing was downloaded. */
  readonly kept: boolean;
  /** The SBOMs saved beside it, by format (none when the service has none for it). */
  readonly sboms: Readonly<Partial<Record<SbomFormat, string>>>;
}

export interface SaveImagesOptions {
  readonly signal?: AbortSignal | undefined;
  readonly onEvent?: EventSink | undefined;
}

/** A name of the service's choosing, reduced to one plain file name. */
function plainName(image: ImageResult): string {
  const name = basename(image.fileName ?? '').replace(/[^A-Za-z0-9._+-]+/g, '_');
  return name === '' || /^\.+$/.test(name) ? `image-${image.builder}.${image.format.replace(/\W+/g, '-').toLowerCase()}` : name;
}

async function sha256If(path: string): Promise<string | undefined> {
  const st = await stat(path).catch(() => undefined);
  return st?.isFile() ? (await digestFile(path, ['sha256'])).sha256 : undefined;
}

/** The image's SBOMs at `<image path><suffix>`; a 404 (no SBOM there) is said and skipped. */
async function saveSboms(client: Client, image: ImageResult, imagePath: string, o: SaveImagesOptions): Promise<Partial<Record<SbomFormat, string>>> {
  const where = uriParams('machineImage_get', image.imageUri);
  const saved: Partial<Record<SbomFormat, string>> = {};
  for (const f of SBOM_FORMATS) {
    const to = `${imagePath}${f.suffix}`;
    try {
      await client.machineImageSbom_download({ ...where, format: f.id, to, ...(o.signal ? { signal: o.signal } : {}) });
    } catch (e) {
      if (!(isForgeError(e, ApiError) && e.status === 404)) throw e;
      o.onEvent?.({ type: 'step', message: `no ${f.id} SBOM for ${image.imageUri} on this service (an image made before SBOMs were kept, or a service without them)` });
      continue;
    }
    saved[f.id] = to;
  }
  return saved;
}

export async function saveImages(client: Client, images: readonly ImageResult[], dir: string, o: SaveImagesOptions = {}): Promise<SavedImage[]> {
  const emit: EventSink = o.onEvent ?? (() => {});
  const out = resolve(dir);
  await mkdir(out, { recursive: true });
  const byUri = new Map<string, { image: ImageResult; builders: number[] }>();
  for (const i of images) {
    const seen = byUri.get(i.imageUri);
    if (seen) seen.builders.push(i.builder);
    else byUri.set(i.imageUri, { image: i, builders: [i.builder] });
  }
  const names = new Set<string>();
  const saved: SavedImage[] = [];
  const failures: Array<{ what: string; error: unknown }> = [];
  for (const { image, builders } of byUri.values()) {
    const what = `download of ${image.format} image ${image.imageUri}`;
    try {
      if (!image.downloadUri || !image.sha256 || image.size === undefined) throw new Error('the service gave no download URI, sha256 or size for it');
      let name = plainName(image);
      for (let n = 2; names.has(name); n++) name = `${n}-${plainName(image)}`;
      names.add(name);
      const path = join(out, name);
      if ((await sha256If(path)) === image.sha256.toLowerCase()) {
        emit({ type: 'step', message: `${path} is already this ${image.format} image (sha256 ${image.sha256})` });
        saved.push({ builders, format: image.format, imageUri: image.imageUri, path, sha256: image.sha256, size: image.size, kept: true, sboms: await saveSboms(client, image, path, o) });
        continue;
      }
      const id = `download:${image.imageUri}`;
      const label = `download ${name}`;
      await client.download(image.downloadUri, {
        to: path,
        sha256: image.sha256,
        ...(o.signal ? { signal: o.signal } : {}),
        onProgress: (p) => {
          const total = p.bytesTotal ?? image.size ?? 0;
          emit({ type: 'progress', id, label, percentage: total > 0 ? Math.floor((100 * p.bytesLoaded) / total) : 0, bytesDone: p.bytesLoaded, bytesTotal: total });
        },
      });
      emit({ type: 'done', id, label, ok: true, message: `sha256 ${image.sha256} checked` });
      saved.push({ builders, format: image.format, imageUri: image.imageUri, path, sha256: image.sha256, size: image.size, kept: false, sboms: await saveSboms(client, image, path, o) });
    } catch (error) {
      if (o.signal?.aborted) throw error;
      failures.push({ what, error });
    }
  }
  if (failures.length > 0) throw new ApplyError(failures);
  return saved;
}
