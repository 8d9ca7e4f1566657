// Digests of large files off the main thread (the server's uploads and their late digests, the
// generated images): one worker thread hashes each shared buffer with every algorithm asked (sha256,
// then md5) while the main thread writes it to the file, so the digests and the disk run side by side.
// One worker, not one per algorithm: on two cores the digests' CPU is the same either way (the client,
// the main thread and the hashing share the cores), and each isolate is ~5 MiB of a server's resident
// memory. The worker starts on first use and stays (unref'd while idle: it never holds the process
// open); each file is one stream of messages, in order.
import { open, type FileHandle } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { Digester } from './digest';
import { BackgroundFlush, writeAt, type SizeLimit } from './file-writes';

export type UploadAlgorithm = 'sha256' | 'md5';

// Plain CommonJS evaluated in the worker: no file to locate, the same under ts (tests), dist/ and a bundle.
const WORKER = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const open = new Map();
const hashes = (m) => {
  let hs = open.get(m.id);
  if (!hs) open.set(m.id, (hs = m.algorithms.map((a) => createHash(a))));
  return hs;
};
parentPort.on('message', (m) => {
  try {
    if (m.t === 'update') {
      const bytes = new Uint8Array(m.buffer, 0, m.length);
      for (const h of hashes(m)) h.update(bytes);
      parentPort.postMessage({ t: 'updated', id: m.id, seq: m.seq });
    } else if (m.t === 'digest') {
      const hex = hashes(m).map((h) => h.digest('hex'));
      open.delete(m.id);
      parentPort.postMessage({ t: 'digest', id: m.id, hex });
    } else if (m.t === 'drop') {
      open.delete(m.id);
    }
  } catch (e) {
    open.delete(m.id);
    parentPort.postMessage({ t: 'error', id: m.id, message: String(e && e.message || e) });
  }
});`;

/**
 * The worker's heaps: it holds a hash object per file and one small message at a time, so a few MiB
 * are plenty (V8's defaults let a young generation grow to tens of MiB of resident memory first).
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 16 };

type Reply = { t: 'updated'; id: number; seq: number } | { t: 'digest'; id: number; hex: string[] } | { t: 'error'; id: number; message: string };

interface Listener {
  updated(seq: number): void;
  digest(hex: string[]): void;
  error(e: Error): void;
}

class HashWorker {
  private readonly worker: Worker;
  private readonly listeners = new Map<number, Listener>();
  constructor() {
    this.worker = new Worker(WORKER, { eval: true, resourceLimits: WORKER_LIMITS });
    this.worker.on('message', (m: Reply) => {
      const l = this.listeners.get(m.id);
      if (!l) return;
      if (m.t === 'updated') l.updated(m.seq);
      else if (m.t === 'digest') l.digest(m.hex);
      else l.error(new Error(`hash worker: ${m.message}`));
    });
    const gone = (e: Error): void => {
      if (worker === this) worker = undefined;
      for (const l of this.listeners.values()) l.error(e);
      this.listeners.clear();
    };
    this.worker.on('error', gone);
    this.worker.on('exit', (code) => gone(new Error(`hash worker exited (${code})`)));
    // Idle, a worker never holds the process open (after the listeners: adding one refs the worker again).
    this.worker.unref();
  }

  /** While a file is being hashed, the worker keeps the process alive (it waits for the digests). */
  listen(id: number, l: Listener): void {
    if (this.listeners.size === 0) this.worker.ref();
    this.listeners.set(id, l);
  }

  forget(id: number): void {
    if (!this.listeners.delete(id)) return;
    this.worker.postMessage({ t: 'drop', id });
    if (this.listeners.size === 0) this.worker.unref();
  }

  post(m: { t: 'update'; id: number; seq: number; buffer: SharedArrayBuffer; length: number; algorithms: readonly UploadAlgorithm[] } | { t: 'digest'; id: number; algorithms: readonly UploadAlgorithm[] }): void {
    this.worker.postMessage(m);
  }
}

let worker: HashWorker | undefined;

let nextId = 1;

/**
 * One file's digests, computed by the worker from shared buffers. `update` returns a promise that
 * settles when the worker is done with that buffer (it may then be reused).
 */
export class ParallelDigest<A extends UploadAlgorithm = UploadAlgorithm> {
  private readonly id = nextId++;
  private readonly hasher: HashWorker;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private finish: { resolve: (hex: string[]) => void; reject: (e: Error) => void } | undefined;
  private failed: Error | undefined;

  constructor(private readonly algorithms: readonly A[]) {
    this.hasher = worker ??= new HashWorker();
    this.hasher.listen(this.id, {
      updated: (seq) => {
        const p = this.waiting.get(seq);
        this.waiting.delete(seq);
        p?.resolve();
      },
      digest: (hex) => this.finish?.resolve(hex),
      error: (e) => this.fail(e),
    });
  }

  private fail(e: Error): void {
    this.failed ??= e;
    for (const p of this.waiting.values()) p.reject(e);
    this.waiting.clear();
    this.finish?.reject(e);
  }

  /** Hash `length` bytes of `buffer` (shared with the worker: leave it alone until this settles). */
  update(buffer: SharedArrayBuffer, length: number): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    const seq = this.seq++;
    const done = new Promise<void>((resolve, reject) => this.waiting.set(seq, { resolve, reject }));
    this.hasher.post({ t: 'update', id: this.id, seq, buffer, length, algorithms: this.algorithms });
    return done;
  }

  /** Hex digests of everything given to update(), once every update has settled. */
  async result(): Promise<Record<A, string>> {
    if (this.failed) throw this.failed;
    const done = new Promise<string[]>((resolve, reject) => (this.finish = { resolve, reject }));
    this.hasher.post({ t: 'digest', id: this.id, algorithms: this.algorithms });
    let hex: string[];
    try {
      hex = await done;
    } finally {
      this.close();
    }
    return Object.fromEntries(this.algorithms.map((a, i) => [a, hex[i]])) as Record<A, string>;
  }

  /** Stop (an upload that failed): pending updates settle (rejected), the worker drops this file's state. */
  close(): void {
    this.fail(new Error('digest closed'));
    this.hasher.forget(this.id);
  }
}

/** Bytes gathered before one write: the disk, sha256 + md5 take each slot side by side. */
const SLOT_BYTES = 1024 * 1024;
/** Slots per file: at most this much of it is in memory (4 MiB), whatever its size. */
const SLOTS = 4;

/** The size of what was written or read, with the digests asked. */
export type SizedDigests<A extends UploadAlgorithm> = { readonly size: number } & { readonly [K in A]: string };

/**
 * Write `source` into `fh` from its start, with its `algorithms` digests. Chunks gather into shared 1 MiB
 * slots; each full slot is written (at its offset) and hashed by the worker at once, while the next
 * slot fills. When every slot is busy, reading waits (backpressure to the source), so memory stays at
 * SLOTS × SLOT_BYTES whatever the file's size. The caller syncs and closes `fh`.
 */
export async function writeBeside<A extends UploadAlgorithm>(
  source: AsyncIterable<Uint8Array>, fh: FileHandle, algorithms: readonly A[], limit?: SizeLimit,
): Promise<SizedDigests<A>> {
  const digest = new ParallelDigest(algorithms);
  const slots = Array.from({ length: SLOTS }, () => ({ buffer: new SharedArrayBuffer(SLOT_BYTES), busy: Promise.resolve() }));
  let cur = 0;
  let fill = 0;
  let size = 0;
  const flush = new BackgroundFlush(fh);
  const hand = async (): Promise<void> => {
    const s = slots[cur]!;
    const bytes = new Uint8Array(s.buffer, 0, fill);
    const written = writeAt(fh, bytes, size - fill);
    flush.after(written, size);
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
    await flush.settled();
    return { size, ...(await digest.result()) };
  } catch (e) {
    digest.close();
    // No write may still be running when the caller closes the file.
    await Promise.allSettled([...slots.map((s) => s.busy), flush.settled()]);
    throw e;
  }
}

/**
 * The `algorithms` digests of the file at `path` (a stored upload's late digests, late-digests.ts), read
 * in shared slots while the last is hashed by the worker. With two algorithms, the first (sha256, the
 * cheaper: ~0.5 ms a slot) is hashed here between reads, so that sha256 and md5 run side by side
 * without a second isolate; one alone goes to the worker, as a write's do.
 */
export async function digestBeside<A extends UploadAlgorithm>(path: string, algorithms: readonly A[], signal?: AbortSignal): Promise<SizedDigests<A>> {
  const split = algorithms.length > 1 ? 1 : 0;
  const fh = await open(path, 'r');
  const here = new Digester(algorithms.slice(0, split));
  const beside = algorithms.length > split ? new ParallelDigest(algorithms.slice(split)) : undefined;
  const slots = Array.from({ length: 2 }, () => ({ buffer: new SharedArrayBuffer(SLOT_BYTES), busy: Promise.resolve() }));
  let size = 0;
  try {
    for (let cur = 0; ; cur = (cur + 1) % slots.length) {
      const s = slots[cur]!;
      await s.busy;
      signal?.throwIfAborted();
      const { bytesRead } = await fh.read(new Uint8Array(s.buffer), 0, SLOT_BYTES, size);
      if (bytesRead === 0) break;
      size += bytesRead;
      s.busy = beside?.update(s.buffer, bytesRead) ?? Promise.resolve();
      s.busy.catch(() => undefined); // awaited when the slot comes round again or at the end
      here.update(new Uint8Array(s.buffer, 0, bytesRead));
    }
    await Promise.all(slots.map((s) => s.busy));
    return { ...here.digests(), ...(await beside?.result()), size };
  } catch (e) {
    beside?.close();
    await Promise.allSettled(slots.map((s) => s.busy));
    throw e;
  } finally {
    await fh.close();
  }
}
