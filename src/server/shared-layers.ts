// The OS layers a build farm's workers share (imaging/os/shared-tier.ts): each layer's archive is a
// blob of the farm's bucket, and the database says which blob is whose (the database is the truth, as
// for every blob); a worker builds a layer while it holds the database's lock of its key.
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { digestFile } from '../digest';
import { parseSharedLayerMeta, SharedLayerError, type SharedLayerTier } from '../imaging';
import type { BlobStore } from './blobs/port';
import type { LayerIndex } from './store/port';

/** Shared layers not used for this long leave the index (and their blobs the bucket, at the next sweep). */
export const SHARED_LAYER_DAYS = 30;

export { SharedLayerError };

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
      return parseSharedLayerMeta(entry.meta, `${key.slice(0, 12)} (its entry in the database)`);
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
