// The md5 of a large upload, filled in after the answer (README "Reference server", "An upload's
// checksums"). MD5 is one sequential chain (~1.25 CPU-s per GiB here, bench/upload.mjs); computed before
// the answer, it held a 1 GiB upload to 0.34 of a raw copy on two cores. The answer carries the size and
// the sha256sum once the file is durable; the md5sum follows on the record, one file at a time in the
// hash worker. A read of the artifact waits for its own, so a read after the upload's answer always has
// it; a record that a stop left without one gets it at its first read (no scan of every record at start).
import { digestBeside } from '../../hash-workers';
import type { Ctx } from '../context';
import type { Row } from '../store/store';

export interface LateMd5 {
  /** Fill the artifact's md5 now: its upload answered without it. */
  schedule(artifactId: number): void;
  /**
   * What a read of `row` waits for: its md5 being filled in (started here when a stop left it missing);
   * undefined when there is nothing to wait for, so that a read stays synchronous.
   */
  pendingFor(row: Row<'artifact'>): Promise<void> | undefined;
}

type Deps = Pick<Ctx, 'store' | 'files' | 'jobs' | 'log'>;

export function lateMd5(ctx: Deps): LateMd5 {
  let tail: Promise<void> = Promise.resolve();
  const pending = new Map<number, Promise<void>>();
  let seq = 0;
  const schedule = (id: number): void => {
    const before = tail;
    // A job of the runner: the server's close aborts it, a test's `jobs.idle()` waits for it.
    const done = new Promise<void>((resolve) =>
      ctx.jobs.start(`md5-${++seq}`, async (signal) => {
        try {
          await before;
          if (!signal.aborted) await fill(ctx, id, signal);
        } finally {
          resolve();
        }
      }),
    );
    tail = done;
    pending.set(id, done);
    void done.then(() => pending.get(id) === done && pending.delete(id));
  };
  const pendingFor = (row: Row<'artifact'>): Promise<void> | undefined => {
    if (!pending.has(row.id) && row.doc.file && row.doc.file.md5 === undefined) schedule(row.id);
    return pending.get(row.id);
  };
  return { schedule, pendingFor };
}

async function fill(ctx: Deps, id: number, signal: AbortSignal): Promise<void> {
  const f = ctx.store.get('artifact', id)?.doc.file;
  if (!f || f.md5 !== undefined) return;
  let md5: string;
  try {
    ({ md5 } = await digestBeside(ctx.files.abs(f.path), ['md5'], signal));
  } catch (e) {
    // Closing (the next start fills it in), or the file was replaced or removed meanwhile.
    if (signal.aborted || ctx.store.get('artifact', id)?.doc.file?.path !== f.path) return;
    ctx.log.error({ err: e }, `the md5 of ${f.path} could not be computed; the next read of its record tries again`);
    return;
  }
  ctx.store.tx(() => {
    const cur = ctx.store.get('artifact', id);
    const file = cur?.doc.file;
    if (cur && file?.path === f.path && file.md5 === undefined) ctx.store.update('artifact', id, { ...cur.doc, file: { ...file, md5 } });
  });
}
