// Writing the image file: bytes go through an optional gzip, then to disk in shared slots that worker
// threads hash (sha256 and md5) beside the writes (hash-workers.ts), so the digests cost no extra read
// and run beside the writer instead of after each chunk on its thread. Files written in place by
// another tool are digested in one streaming pass instead.
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { Digester, digestFile as digestWholeFile } from '../../digest';
import { AbortedError } from '../../errors';
import { writeBeside } from '../../hash-workers';
import { dataRanges, type Ranges } from './extents';

export interface Digests {
  readonly fileSize: number;
  readonly sha256: string;
  readonly md5: string;
}

function asAborted(e: unknown, signal?: AbortSignal): unknown {
  return signal?.aborted || (e instanceof Error && e.name === 'AbortError') ? new AbortedError('image build aborted') : e;
}

export interface WriteOptions {
  readonly compress: boolean;
  readonly signal?: AbortSignal | undefined;
}

/** Write `source` to the new file `path` (gzipped when asked), then flush it to disk. */
export async function writeDigested(source: AsyncIterable<Buffer> | Readable, path: string, o: WriteOptions): Promise<Digests> {
  const fh = await open(path, 'wx');
  try {
    const write = (chunks: AsyncIterable<Buffer>) => writeBeside(chunks, fh, ['sha256', 'md5']);
    const signal = o.signal ? { signal: o.signal } : {};
    const d = o.compress ? await pipeline(source, createGzip(), write, signal) : await pipeline(source, write, signal);
    await fh.sync();
    return asDigests(d);
  } catch (e) {
    throw asAborted(e, o.signal);
  } finally {
    await fh.close();
  }
}

/**
 * Digests of an existing file, read once. Only the extents that hold data are read: a hole is hashed
 * from a buffer of zeros, so a mostly empty raw disk costs no read of its empty part (the checksum is
 * still that of every byte, as a client that downloads the file computes it). Where the extent map is
 * unknown, the whole file is read.
 */
export async function digestFile(path: string, signal?: AbortSignal, onBytes?: (n: number) => void): Promise<Digests> {
  try {
    const ranges = await dataRanges(path, signal);
    if (ranges === null) return asDigests(await digestWholeFile(path, ['sha256', 'md5'], { ...(signal ? { signal } : {}), ...(onBytes ? { onBytes } : {}) }));
    return asDigests(await digestSparse(path, ranges, signal, onBytes));
  } catch (e) {
    throw asAborted(e, signal);
  }
}

const CHUNK = 1 << 20;
const ZEROS = new Uint8Array(CHUNK);

async function digestSparse(path: string, ranges: Ranges, signal?: AbortSignal, onBytes?: (n: number) => void): Promise<{ size: number; sha256: string; md5: string }> {
  const d = new Digester(['sha256', 'md5'], onBytes);
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const buf = Buffer.allocUnsafe(CHUNK);
    let pos = 0;
    let r = 0;
    while (pos < size) {
      signal?.throwIfAborted();
      while (r < ranges.length && ranges[r]![1] <= pos) r++;
      const next = ranges[r];
      const inData = next !== undefined && next[0] <= pos;
      const end = Math.min(size, inData ? next[1] : (next?.[0] ?? size), pos + CHUNK);
      if (inData) {
        const { bytesRead } = await fh.read(buf, 0, end - pos, pos);
        if (bytesRead !== end - pos) throw new Error(`short read of ${path} at ${pos}`);
        d.update(buf.subarray(0, bytesRead));
      } else {
        d.update(ZEROS.subarray(0, end - pos));
      }
      pos = end;
    }
    return d.digests();
  } finally {
    await fh.close();
  }
}

function asDigests(d: { readonly size: number; readonly sha256: string; readonly md5: string }): Digests {
  return { fileSize: d.size, sha256: d.sha256, md5: d.md5 };
}

/** Flush a finished file before it is renamed into place, so a crash cannot leave a short image. */
export async function syncFile(path: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
