// Digests of large files off the main thread (the server's uploads, the generated images): one worker
// thread per algorithm, each hashing the same shared buffers while the main thread writes them to the
// file, so sha256, md5 and the disk run side by side. Workers start on first use and stay (unref'd
// while idle: they never hold the process open); each file is one stream of messages, in order, to
// each worker.
import type { FileHandle } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';

export type UploadAlgorithm = 'sha256' | 'md5';

// Plain CommonJS evaluated in the worker: no file to locate, the same under ts (tests), dist/ and a bundle.
const WORKER = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const open = new Map();
parentPort.on('message', (m) => {
  try {
    if (m.t === 'update') {
      let h = open.get(m.id);
      if (!h) open.set(m.id, (h = createHash(m.algorithm)));
      h.update(new Uint8Array(m.buffer, 0, m.length));
      parentPort.postMessage({ t: 'updated', id: m.id, seq: m.seq });
    } else if (m.t === 'digest') {
      const h = open.get(m.id) ?? createHash(m.algorithm);
      open.delete(m.id);
      parentPort.postMessage({ t: 'digest', id: m.id, hex: h.digest('hex') });
    } else if (m.t === 'drop') {
      open.delete(m.id);
    }
  } catch (e) {
    open.delete(m.id);
    parentPort.postMessage({ t: 'error', id: m.id, message: String(e && e.message || e) });
  }
});`;

type Reply = { t: 'updated'; id: number; seq: number } | { t: 'digest'; id: number; hex: string } | { t: 'error'; id: number; message: string };

interface Listener {
  updated(seq: number): void;
  digest(hex: string): void;
  error(e: Error): void;
}

class HashWorker {
  private readonly worker: Worker;
  private readonly listeners = new Map<number, Listener>();
  constructor(readonly algorithm: UploadAlgorithm) {
    this.worker = new Worker(WORKER, { eval: true });
    this.worker.on('message', (m: Reply) => {
      const l = this.listeners.get(m.id);
      if (!l) return;
      if (m.t === 'updated') l.updated(m.seq);
      else if (m.t === 'digest') l.digest(m.hex);
      else l.error(new Error(`${this.algorithm} worker: ${m.message}`));
    });
    const gone = (e: Error): void => {
      if (workers.get(this.algorithm) === this) workers.delete(this.algorithm);
      for (const l of this.listeners.values()) l.error(e);
      this.listeners.clear();
    };
    this.worker.on('error', gone);
    this.worker.on('exit', (code) => gone(new Error(`${this.algorithm} worker exited (${code})`)));
    // Idle, a worker never holds the process open (after the listeners: adding one refs the worker again).
    this.worker.unref();
  }

  /** While an upload is being hashed, its worker keeps the process alive (it waits for the digests). */
  listen(id: number, l: Listener): void {
    if (this.listeners.size === 0) this.worker.ref();
    this.listeners.set(id, l);
  }

  forget(id: number): void {
    if (!this.listeners.delete(id)) return;
    this.worker.postMessage({ t: 'drop', id });
    if (this.listeners.size === 0) this.worker.unref();
  }

  post(m: { t: 'update'; id: number; seq: number; buffer: SharedArrayBuffer; length: number } | { t: 'digest'; id: number }): void {
    this.worker.postMessage({ ...m, algorithm: this.algorithm });
  }
}

const workers = new Map<UploadAlgorithm, HashWorker>();
function workerFor(a: UploadAlgorithm): HashWorker {
  let w = workers.get(a);
  if (!w) workers.set(a, (w = new HashWorker(a)));
  return w;
}

let nextId = 1;

/**
 * One upload's digests, computed by the workers from shared buffers. `update` returns a promise that
 * settles when every worker is done with that buffer (it may then be reused).
 */
export class ParallelDigest {
  private readonly id = nextId++;
  private readonly hashers: HashWorker[];
  private seq = 0;
  private readonly waiting = new Map<number, { left: number; resolve: () => void; reject: (e: Error) => void }>();
  private readonly digests = new Map<UploadAlgorithm, string>();
  private finish: { left: number; resolve: () => void; reject: (e: Error) => void } | undefined;
  private failed: Error | undefined;

  constructor(algorithms: readonly UploadAlgorithm[]) {
    this.hashers = algorithms.map(workerFor);
    for (const w of this.hashers) {
      w.listen(this.id, {
        updated: (seq) => {
          const p = this.waiting.get(seq);
          if (p && --p.left === 0) {
            this.waiting.delete(seq);
            p.resolve();
          }
        },
        digest: (hex) => {
          this.digests.set(w.algorithm, hex);
          if (this.finish && --this.finish.left === 0) this.finish.resolve();
        },
        error: (e) => this.fail(e),
      });
    }
  }

  private fail(e: Error): void {
    this.failed ??= e;
    for (const p of this.waiting.values()) p.reject(e);
    this.waiting.clear();
    this.finish?.reject(e);
  }

  /** Hash `length` bytes of `buffer` (shared with the workers: leave it alone until this settles). */
  update(buffer: SharedArrayBuffer, length: number): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    const seq = this.seq++;
    const done = new Promise<void>((resolve, reject) => this.waiting.set(seq, { left: this.hashers.length, resolve, reject }));
    for (const w of this.hashers) w.post({ t: 'update', id: this.id, seq, buffer, length });
    return done;
  }

  /** Hex digests of everything given to update(), once every update has settled. */
  async result(): Promise<Record<UploadAlgorithm, string>> {
    if (this.failed) throw this.failed;
    const done = new Promise<void>((resolve, reject) => (this.finish = { left: this.hashers.length, resolve, reject }));
    for (const w of this.hashers) w.post({ t: 'digest', id: this.id });
    try {
      await done;
    } finally {
      this.close();
    }
    return Object.fromEntries(this.digests) as Record<UploadAlgorithm, string>;
  }

  /** Stop (an upload that failed): pending updates settle (rejected), the workers drop this upload's state. */
  close(): void {
    this.fail(new Error('digest closed'));
    for (const w of this.hashers) w.forget(this.id);
  }
}

/** Bytes gathered before one write: the disk, sha256 and md5 take each slot side by side. */
const SLOT_BYTES = 1024 * 1024;
/** Slots per file: at most this much of it is in memory (4 MiB), whatever its size. */
const SLOTS = 4;
/** Bytes between two background flushes of a large file (see writeBeside). */
const FLUSH_EVERY = 64 * 1024 * 1024;

/** A bound on the file's size: past `bytes`, the write stops with `error()`. */
export interface SizeLimit {
  readonly bytes: number;
  readonly error: () => Error;
}

export interface WrittenDigests {
  readonly size: number;
  readonly sha256: string;
  readonly md5: string;
}

/**
 * Write `source` into `fh` from its start, with its sha256 and md5. Chunks gather into shared 1 MiB
 * slots; each full slot is written (at its offset) and hashed by the workers at once, while the next
 * slot fills. When every slot is busy, reading waits (backpressure to the source), so memory stays at
 * SLOTS × SLOT_BYTES whatever the file's size. The caller syncs and closes `fh`.
 */
export async function writeBeside(source: AsyncIterable<Uint8Array>, fh: FileHandle, limit?: SizeLimit): Promise<WrittenDigests> {
  const digest = new ParallelDigest(['sha256', 'md5']);
  const slots = Array.from({ length: SLOTS }, () => ({ buffer: new SharedArrayBuffer(SLOT_BYTES), busy: Promise.resolve() }));
  let cur = 0;
  let fill = 0;
  let size = 0;
  // The disk writes back while bytes still arrive: one fdatasync at a time in the background, every
  // FLUSH_EVERY bytes, so that the closing fsync (the one that makes the file durable) finds only the
  // tail left; alone at the end it took ~1.5 s of a 1 GiB upload (bench/upload).
  let flushing: Promise<void> | undefined;
  let flushedAt = 0;
  const hand = async (): Promise<void> => {
    const s = slots[cur]!;
    const bytes = new Uint8Array(s.buffer, 0, fill);
    const written = writeAt(fh, bytes, size - fill);
    if (!flushing && size - flushedAt >= FLUSH_EVERY) {
      flushedAt = size;
      flushing = written.then(() => fh.datasync()).finally(() => (flushing = undefined));
      flushing.catch(() => undefined); // the closing fsync reports a failing disk
    }
    s.busy = Promise.all([written, digest.update(s.buffer, fill)]).then(() => undefined);
    s.busy.catch(() => undefined); // awaited below, when the slot comes round again or at the end
    cur = (cur + 1) % SLOTS;
    fill = 0;
    await slots[cur]!.busy;
  };
  try {
    for await (const chunk of source) {
      if (limit && size + chunk.byteLength > limit.bytes) throw limit.error();
      for (let off = 0; off < chunk.byteLength; ) {
        const n = Math.min(SLOT_BYTES - fill, chunk.byteLength - off);
        new Uint8Array(slots[cur]!.buffer, fill, n).set(chunk.subarray(off, off + n));
        fill += n;
        off += n;
        size += n;
        if (fill === SLOT_BYTES) await hand();
      }
    }
    if (fill > 0) await hand();
    await Promise.all(slots.map((s) => s.busy));
    await flushing?.catch(() => undefined);
    const { sha256, md5 } = await digest.result();
    return { size, sha256, md5 };
  } catch (e) {
    digest.close();
    // No write may still be running when the caller closes the file.
    await Promise.allSettled([...slots.map((s) => s.busy), flushing]);
    throw e;
  }
}

/** pwrite until every byte is down (a regular file takes all at once; a short write is retried). */
async function writeAt(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.byteLength; ) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.byteLength - done, position + done);
    done += bytesWritten;
  }
}
