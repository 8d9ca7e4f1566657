// The sha256 and md5 of a large upload, filled in after the answer (docs/server.md, "An
// upload's checksums"). Each digest is one sequential chain (sha256 ~0.55, md5 ~1.25 CPU-s per GiB
// here, bench/upload.mjs); computed while the bytes arrive, they held a 1 GiB upload to 0.34 (both) and
// 0.41–0.59 (sha256 alone) of a raw copy on two cores, where the client, the socket and the disk
// already take the cores. The answer carries the size once the file is durable; the checksums follow
// on the record, read back from the file one file at a time (sha256 on the main thread between reads,
// md5 in the hash worker, side by side). A read of the artifact or of its file waits for its own, so a
// read after the upload's answer always has them; a record that a stop left without them gets them at
// its first read (no scan of every record at start). Files take turns between owners by the build slots'
// rule (queue/build-slots.ts), so one owner's pile of large uploads never holds another's read for long.
import { pipeline } from 'node:stream/promises';
import { Digester } from '../../digest';
import { digestBeside, type SizedDigests, type UploadAlgorithm } from '../../hash-workers';
import type { Ctx } from '../context';
import { BuildSlots } from '../queue/build-slots';
import type { Row } from '../store/port';
import type { UploadedFile } from '../store/docs';

export interface LateDigests {
  /** Fill the checksums of `owner`'s artifact now: its upload answered without them. */
  schedule(artifactId: number, owner: string): void;
  /**
   * What a read of `row` waits for: its checksums being filled in (started here when a stop left them
   * missing); undefined when there is nothing to wait for, so that a read stays synchronous.
   */
  pendingFor(row: Row<'artifact'>): Promise<void> | undefined;
}

type Deps = Pick<Ctx, 'store' | 'blobs' | 'jobs' | 'log'>;

/** The digests a stored upload still lacks. */
const missing = (f: UploadedFile): UploadAlgorithm[] => (['sha256', 'md5'] as const).filter((a) => f[a] === undefined);

const registries = new WeakMap<object, LateDigests>();

/** The late digests of a server (one per store). */
export function lateDigestsOf(ctx: Deps): LateDigests {
  let l = registries.get(ctx.store);
  if (!l) registries.set(ctx.store, (l = lateDigests(ctx)));
  return l;
}

function lateDigests(ctx: Deps): LateDigests {
  // One file at a time (each digest is one sequential chain), in fair turns between owners.
  const turns = new BuildSlots(1);
  const pending = new Map<number, Promise<void>>();
  let seq = 0;
  const schedule = (id: number, owner: string): void => {
    // A job of the runner: the server's close aborts it, a test's `jobs.idle()` waits for it.
    const done = new Promise<void>((resolve) =>
      ctx.jobs.start(`digests-${++seq}`, async (signal) => {
        try {
          const release = await turns.acquire(signal, undefined, owner);
          try {
            if (!signal.aborted) await fill(ctx, id, signal);
          } finally {
            release();
          }
        } finally {
          resolve();
        }
      }),
    );
    pending.set(id, done);
    void done.then(() => pending.get(id) === done && pending.delete(id));
  };
  const pendingFor = (row: Row<'artifact'>): Promise<void> | undefined => {
    if (!pending.has(row.id) && row.doc.file && missing(row.doc.file).length > 0) schedule(row.id, row.owner);
    return pending.get(row.id);
  };
  return { schedule, pendingFor };
}

/** The digests of a stored blob: beside the hash worker when it is a local file, else as its bytes stream. */
async function digestsOf(ctx: Deps, key: string, algorithms: readonly UploadAlgorithm[], signal: AbortSignal): Promise<SizedDigests<UploadAlgorithm>> {
  const local = ctx.blobs.localPath?.(key);
  if (local !== undefined) return digestBeside(local, algorithms, signal);
  const d = new Digester(algorithms);
  await pipeline(await ctx.blobs.open(key), async (source: AsyncIterable<Uint8Array>) => {
    for await (const chunk of source) d.update(chunk);
  }, { signal });
  return d.digests();
}

async function fill(ctx: Deps, id: number, signal: AbortSignal): Promise<void> {
  const f = (await ctx.store.get('artifact', id))?.doc.file;
  const algorithms = f ? missing(f) : [];
  if (!f || algorithms.length === 0) return;
  let found: Partial<Record<UploadAlgorithm, string>>;
  try {
    const { size, ...hex } = await digestsOf(ctx, f.path, algorithms, signal);
    // A stored file never changes: another size is a file replaced outside the server.
    if (size !== f.size) throw new Error(`${size} bytes on disk, ${f.size} in the record`);
    found = hex;
  } catch (e) {
    // Closing (the next start fills them in), or the file was replaced or removed meanwhile.
    if (signal.aborted || (await ctx.store.get('artifact', id))?.doc.file?.path !== f.path) return;
    ctx.log.error({ err: e }, `the checksums of ${f.path} could not be computed; the next read of its record tries again`);
    return;
  }
  await ctx.store.tx(async (t) => {
    const cur = await t.get('artifact', id);
    const file = cur?.doc.file;
    if (cur && file?.path === f.path) await t.update('artifact', id, { ...cur.doc, file: { ...file, sha256: file.sha256 ?? found.sha256, md5: file.md5 ?? found.md5 } });
  });
}
