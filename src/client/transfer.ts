// Streaming upload and download. Bodies are never held in memory: an upload reads its file (or the
// caller's stream factory) with an explicit content-length, a download writes to a temporary name
// beside its destination and renames it when complete.
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Transform, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Digester } from '../digest';
import { isForgeError } from '../errors';
import { ChecksumError } from './errors';
import { transportFailure } from './transport';
import type { ReopenableBody } from './wire';

export interface Progress {
  bytesLoaded: number;
  /** From the content-length; undefined when the server did not send one. */
  bytesTotal: number | undefined;
}

/**
 * An upload body: a file path, or a stream factory with the exact size. The factory is called once
 * per attempt; an upload is a POST, so a second attempt happens only when the first could not even
 * connect (retry.ts) — the factory must still give the same bytes each time.
 */
export type UploadSource = { file: string } | { open: () => Readable; size: number };

export interface DownloadResult {
  /** Bytes written. */
  size: number;
  /** The destination, when it was a path. */
  path?: string;
}

/** A pass-through that reports how many bytes went by. */
function counter(total: number | undefined, onProgress: ((p: Progress) => void) | undefined): Transform {
  let loaded = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      loaded += chunk.length;
      onProgress?.({ bytesLoaded: loaded, bytesTotal: total });
      done(null, chunk);
    },
  });
}

/** Turn an upload source into a body the transport can (re)open. */
export async function uploadBody(source: UploadSource, onProgress?: (p: Progress) => void): Promise<ReopenableBody> {
  if (typeof source !== 'object' || source === null) throw new TypeError('upload source must be {file} or {open, size}');
  let open: () => Readable;
  let size: number;
  if ('file' in source) {
    if (typeof source.file !== 'string' || source.file === '') throw new TypeError('upload: file must be a non-empty path');
    const file = source.file;
    const st = await stat(file).catch((e: NodeJS.ErrnoException) => {
      throw new TypeError(`upload: cannot read ${file}: ${e.code ?? e.message}`);
    });
    if (!st.isFile()) throw new TypeError(`upload: ${file} is not a regular file`);
    size = st.size;
    // 1 MiB reads: a third of the CPU of the default 64 KiB per byte sent (bench/upload).
    open = () => createReadStream(file, { highWaterMark: 1024 * 1024 });
  } else {
    if (typeof source.open !== 'function') throw new TypeError('upload: open must be a function returning a Readable');
    if (!Number.isSafeInteger(source.size) || source.size < 0) throw new TypeError('upload: size must be a non-negative integer');
    size = source.size;
    open = source.open;
  }
  return {
    size,
    open: () => {
      const src = open();
      const c = counter(size, onProgress);
      src.on('error', (e) => c.destroy(e));
      c.on('close', () => src.destroy()); // undici destroys the body on failure: release the file too
      return src.pipe(c);
    },
  };
}

/** Copy a response body to a path (temp name + rename) or a Writable, reporting progress. */
export async function saveBody(
  body: Readable,
  headers: Record<string, string>,
  to: string | Writable,
  meta: { method: 'GET'; target: string; signal?: AbortSignal | undefined },
  onProgress?: (p: Progress) => void,
  sha256?: string,
): Promise<DownloadResult> {
  const length = Number(headers['content-length']);
  const total = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
  let size = 0;
  const c = counter(total, (p) => {
    size = p.bytesLoaded;
    onProgress?.(p);
  });
  // The sha256 is computed on the way through, so a checked download still reads the bytes once.
  const digester = sha256 === undefined ? undefined : new Digester(['sha256']);
  const stages = digester ? [c, digester.tap()] as const : [c] as const;
  const verify = (): void => {
    const actual = digester?.digests().sha256;
    if (actual !== undefined && actual !== sha256!.toLowerCase()) throw new ChecksumError(meta.target, sha256!, actual);
  };
  const opts = meta.signal ? { signal: meta.signal } : {};
  if (typeof to !== 'string') {
    await pipeline([body, ...stages, to], opts).catch((e) => rethrow(e, meta));
    verify();
    return { size };
  }
  const tmp = join(dirname(to), `.${basename(to)}.${randomBytes(6).toString('hex')}.part`);
  try {
    await pipeline([body, ...stages, createWriteStream(tmp, { flags: 'wx' })], opts);
    verify();
    await rename(tmp, to);
  } catch (e) {
    body.destroy();
    await unlink(tmp).catch(() => undefined);
    rethrow(e, meta);
  }
  return { size, path: to };
}

function rethrow(e: unknown, meta: { method: 'GET'; target: string; signal?: AbortSignal | undefined }): never {
  if (isForgeError(e) || (e as NodeJS.ErrnoException)?.syscall) throw e; // our own, or the file system's
  throw transportFailure(e, meta);
}
