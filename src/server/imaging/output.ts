// Writing the image file: bytes go through an optional gzip and a tap that computes sha256, md5 and
// the size on the way to disk, so the digests cost no extra read. Files written in place by another
// tool are digested in one streaming pass instead.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, Writable, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { AbortedError } from '../../errors';

export interface Digests {
  readonly fileSize: number;
  readonly sha256: string;
  readonly md5: string;
}

class Digester {
  private readonly sha = createHash('sha256');
  private readonly md5: Hash = createHash('md5');
  size = 0;
  constructor(private readonly onBytes?: (n: number) => void) {}
  update(b: Buffer): void {
    this.sha.update(b);
    this.md5.update(b);
    this.size += b.length;
    this.onBytes?.(this.size);
  }
  result(): Digests {
    return { fileSize: this.size, sha256: this.sha.digest('hex'), md5: this.md5.digest('hex') };
  }
}

function tap(d: Digester): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      d.update(chunk);
      cb(null, chunk);
    },
  });
}

function asAborted(e: unknown, signal?: AbortSignal): unknown {
  return signal?.aborted || (e instanceof Error && e.name === 'AbortError') ? new AbortedError('image build aborted') : e;
}

export interface WriteOptions {
  readonly compress: boolean;
  readonly signal?: AbortSignal;
  /** Bytes written to the file so far. */
  readonly onBytes?: (n: number) => void;
}

/** Write `source` to the new file `path` (gzipped when asked), then flush it to disk. */
export async function writeDigested(source: AsyncIterable<Buffer> | Readable, path: string, o: WriteOptions): Promise<Digests> {
  const d = new Digester(o.onBytes);
  const out = createWriteStream(path, { flags: 'wx' });
  try {
    if (o.compress) await pipeline(source, createGzip(), tap(d), out, { signal: o.signal });
    else await pipeline(source, tap(d), out, { signal: o.signal });
  } catch (e) {
    // The file may still be opening when the source fails first: wait until the stream has closed,
    // so that the caller's clean-up of `path` runs after the file exists, never before.
    if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
    throw asAborted(e, o.signal);
  }
  await syncFile(path);
  return d.result();
}

/** Digests of an existing file, read once. */
export async function digestFile(path: string, signal?: AbortSignal, onBytes?: (n: number) => void): Promise<Digests> {
  const d = new Digester(onBytes);
  const sink = new Writable({
    write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void) {
      d.update(chunk);
      cb();
    },
  });
  try {
    await pipeline(createReadStream(path, { highWaterMark: 1 << 20 }), sink, { signal });
  } catch (e) {
    throw asAborted(e, signal);
  }
  return d.result();
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
