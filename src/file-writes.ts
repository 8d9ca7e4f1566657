// Writing a large file to disk as it arrives: positioned writes that retry a short write, and the
// background flushes that leave the closing fsync only a tail (used with and without digests: the
// hash workers' writeBeside, and an upload whose digests come after its answer).
import type { FileHandle } from 'node:fs/promises';

/** Bytes between two background flushes of a large file. */
const FLUSH_EVERY = 64 * 1024 * 1024;
/** Bytes of arrived chunks gathered into one write (writeAll). */
const BATCH_BYTES = 1024 * 1024;
/**
 * Chunks gathered into one write: a socket's are up to 64 KiB (16 a batch), but a client that sends
 * tiny segments would otherwise have a batch hold a Buffer object per byte or so.
 */
const BATCH_CHUNKS = 256;

/** A bound on the file's size: past `bytes`, the write stops with `error()`. */
export interface SizeLimit {
  readonly bytes: number;
  readonly error: () => Error;
}

/**
 * The disk writes back while bytes still arrive: one fdatasync at a time in the background, every
 * FLUSH_EVERY bytes, so that the closing fsync (the one that makes the file durable) finds only the
 * tail left; alone at the end it took ~1.5 s of a 1 GiB upload (bench/upload).
 */
export class BackgroundFlush {
  private flushing: Promise<void> | undefined;
  private flushedAt = 0;
  constructor(private readonly fh: FileHandle) {}

  /** `written` brings the file to `size` bytes: once it is down, a flush starts if none runs and enough came since the last. */
  after(written: Promise<void>, size: number): void {
    if (this.flushing || size - this.flushedAt < FLUSH_EVERY) return;
    this.flushedAt = size;
    const f: Promise<void> = written.then(() => this.fh.datasync()).finally(() => {
      if (this.flushing === f) this.flushing = undefined;
    });
    f.catch(() => undefined); // the closing fsync reports a failing disk
    this.flushing = f;
  }

  /** The flush in flight is over (its failure is the closing fsync's to report). */
  settled(): Promise<void> {
    return this.flushing?.catch(() => undefined) ?? Promise.resolve();
  }
}

/** pwrite until every byte is down (a regular file takes all at once; a short write is retried). */
export async function writeAt(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.byteLength; ) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.byteLength - done, position + done);
    done += bytesWritten;
  }
}

/** pwritev of `chunks` at `position`, what a short write left written piece by piece. */
async function writevAt(fh: FileHandle, chunks: readonly Uint8Array[], position: number): Promise<void> {
  let { bytesWritten: done } = await fh.writev(chunks, position);
  for (const c of chunks) {
    if (done >= c.byteLength) {
      done -= c.byteLength;
    } else {
      await writeAt(fh, c.subarray(done), position);
      done = 0;
    }
    position += c.byteLength;
  }
}

/**
 * Write `source` into `fh` from its start, without digests: the chunks as they arrive, gathered into
 * one pwritev of ~BATCH_BYTES or BATCH_CHUNKS (no copy), one write at a time, so at most two batches
 * are held whatever the file's size. The source must leave a chunk's memory alone once it has yielded it (a socket's
 * chunks are fresh buffers). The caller syncs and closes `fh`.
 */
export async function writeAll(source: AsyncIterable<Uint8Array>, fh: FileHandle, limit?: SizeLimit): Promise<{ readonly size: number }> {
  const flush = new BackgroundFlush(fh);
  let batch: Uint8Array[] = [];
  let batchBytes = 0;
  let size = 0;
  let inFlight: Promise<void> = Promise.resolve();
  const hand = async (): Promise<void> => {
    const chunks = batch;
    const at = size - batchBytes;
    batch = [];
    batchBytes = 0;
    await inFlight;
    inFlight = writevAt(fh, chunks, at);
    inFlight.catch(() => undefined); // awaited at the next batch or at the end
    flush.after(inFlight, size);
  };
  try {
    for await (const chunk of source) {
      if (limit && size + chunk.byteLength > limit.bytes) throw limit.error();
      if (chunk.byteLength === 0) continue;
      batch.push(chunk);
      batchBytes += chunk.byteLength;
      size += chunk.byteLength;
      if (batchBytes >= BATCH_BYTES || batch.length >= BATCH_CHUNKS) await hand();
    }
    if (batchBytes > 0) await hand();
    await inFlight;
    await flush.settled();
    return { size };
  } catch (e) {
    // No write may still be running when the caller closes the file.
    await Promise.allSettled([inFlight, flush.settled()]);
    throw e;
  }
}
