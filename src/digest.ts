// Streaming digests of bytes as they pass: uploads on the server, generated images, the Glance
// upload, and the content hashes of local files in the engine and the Pulumi provider. One chunk in
// memory at a time, whatever the size.
import { createHash, type Hash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export type DigestAlgorithm = 'md5' | 'sha1' | 'sha256' | 'sha512';
export type DigestsOf<A extends DigestAlgorithm> = { readonly size: number } & { readonly [K in A]: string };

export class Digester<A extends DigestAlgorithm> {
  private readonly hashes: ReadonlyArray<readonly [A, Hash]>;
  size = 0;
  constructor(algorithms: readonly A[], private readonly onBytes?: (size: number) => void) {
    this.hashes = algorithms.map((a) => [a, createHash(a)] as const);
  }

  update(chunk: Uint8Array): void {
    for (const [, h] of this.hashes) h.update(chunk);
    this.size += chunk.byteLength;
    this.onBytes?.(this.size);
  }

  /** Hex digests; call once, at the end. */
  digests(): DigestsOf<A> {
    const out: Record<string, string | number> = { size: this.size };
    for (const [a, h] of this.hashes) out[a] = h.digest('hex');
    return out as DigestsOf<A>;
  }

  /** A pass-through stream that hashes what goes through it. */
  tap(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) => {
        this.update(chunk);
        cb(null, chunk);
      },
    });
  }
}

/** Digests of a file, read once as a stream. */
export async function digestFile<A extends DigestAlgorithm>(
  path: string,
  algorithms: readonly A[],
  o: { signal?: AbortSignal; onBytes?: (size: number) => void } = {},
): Promise<DigestsOf<A>> {
  const d = new Digester(algorithms, o.onBytes);
  await pipeline(createReadStream(path, { highWaterMark: 1 << 20 }), d.tap(), async (source: AsyncIterable<Buffer>) => {
    for await (const _ of source); // drain: the tap has hashed each chunk
  }, o.signal ? { signal: o.signal } : {});
  return d.digests();
}

/** sha256 of a file, synchronously, in fixed chunks (for callers that cannot await, e.g. a provider's check). */
export function sha256FileSync(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const h = createHash('sha256');
    const buf = Buffer.alloc(1 << 20);
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) h.update(buf.subarray(0, n));
    return h.digest('hex');
  } finally {
    closeSync(fd);
  }
}
