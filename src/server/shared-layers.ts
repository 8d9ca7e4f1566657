// The OS layers a build farm's workers share (imaging/os/shared-tier.ts): each layer's archive is a
// blob of the farm's bucket, and the database says which blob is whose (the database is the truth, as
// for every blob); a worker builds a layer while it holds the database's lock of its key.
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { digestFile } from '../digest';
import { ForgeError } from '../errors';
import type { SharedLayerMeta, SharedLayerTier } from '../imaging/os';
import type { InstalledPackage } from '../imaging/system';
import type { BlobStore } from './blobs/port';
import type { LayerIndex } from './store/port';

/** Shared layers not used for this long leave the index (and their blobs the bucket, at the next sweep). */
export const SHARED_LAYER_DAYS = 30;

/** A shared layer's archive that is not what was stored: the layer is then built here (a warning, never a failed build). */
export class SharedLayerError extends ForgeError {
  static readonly code = 'E_SHARED_LAYER';
  constructor(message: string) {
    super(message);
    this.name = 'SharedLayerError';
  }
}

export function sharedLayers(index: LayerIndex, blobs: BlobStore): SharedLayerTier {
  return {
    where: blobs.where,
    has: async (key) => (await index.get(key)) !== undefined,
    async fetch(key, dest, signal) {
      const entry = await index.get(key);
      if (!entry) return undefined;
      await blobs.fetch(entry.blob, dest, signal);
      const { sha256 } = await digestFile(dest, ['sha256'], signal ? { signal } : {});
      if (sha256 !== entry.sha256) throw new SharedLayerError(`the shared OS layer ${key.slice(0, 12)} (${entry.blob}) is not the file that was stored: its sha256 is ${sha256}, not ${entry.sha256}`);
      return metaOf(entry.meta, key);
    },
    async put(key, archive, meta, signal) {
      if (await index.get(key)) return;
      const { sha256 } = await digestFile(archive, ['sha256'], signal ? { signal } : {});
      const { size } = await stat(archive);
      const blob = `layers/${randomBytes(8).toString('hex')}-${key.slice(0, 16)}.tar`;
      await blobs.copyIn(archive, blob, signal);
      const kept = await index.put({ key, blob, sha256, size, meta: JSON.stringify({ installed: meta.installed, sourceDateEpoch: meta.sourceDateEpoch }) }).catch(async (e: unknown) => {
        await blobs.remove(blob).catch(() => undefined);
        throw e;
      });
      // Another worker's entry came first: this copy is no one's.
      if (!kept) await blobs.remove(blob);
    },
    tryLock: (key) => index.tryLock(`os-layer ${key}`),
  };
}

/** The meta kept with a layer, checked: it comes from the database, which other tools may write. */
function metaOf(text: string, key: string): SharedLayerMeta {
  const bad = (): never => {
    throw new SharedLayerError(`the shared OS layer ${key.slice(0, 12)} has a malformed entry in the database`);
  };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return bad();
  }
  const m = v as { installed?: unknown; sourceDateEpoch?: unknown };
  if (!Number.isSafeInteger(m.sourceDateEpoch) || !Array.isArray(m.installed)) return bad();
  const installed = (m.installed as unknown[]).map((p): InstalledPackage => {
    const q = p as Partial<Record<keyof InstalledPackage, unknown>> | null;
    if (typeof q?.name !== 'string' || typeof q.version !== 'string' || typeof q.arch !== 'string') return bad();
    return { name: q.name, version: q.version, arch: q.arch };
  });
  return { installed, sourceDateEpoch: m.sourceDateEpoch as number };
}
