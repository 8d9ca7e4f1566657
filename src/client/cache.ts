// Conditional-GET cache (wire contract §6): remembers ETag / Last-Modified per target and Accept,
// revalidates with If-None-Match / If-Modified-Since and serves the stored body on 304. Bounded in
// entries and bytes; least recently used entries go first. Sits above the signer so that its key
// is the unsigned target.
import { bodyOf, dump, readBody, type Exchange, type WireResponse } from './wire';

export interface CacheOptions {
  /** Default 256. */
  maxEntries?: number;
  /** Total stored body bytes; default 16 MiB. A body larger than a quarter of it is not stored. */
  maxBytes?: number;
}

interface Entry {
  etag?: string;
  lastModified?: string;
  headers: Record<string, string>;
  data: Buffer;
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  readonly maxEntries: number;
  readonly maxBytes: number;

  constructor(o: CacheOptions = {}) {
    this.maxEntries = positive(o.maxEntries ?? 256, 'cache.maxEntries');
    this.maxBytes = positive(o.maxBytes ?? 16 * 1024 * 1024, 'cache.maxBytes');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (e) {
      this.entries.delete(key); // refresh its place in the LRU order
      this.entries.set(key, e);
    }
    return e;
  }

  set(key: string, e: Entry): void {
    this.delete(key);
    if (e.data.length > this.maxBytes / 4) return;
    this.entries.set(key, e);
    this.bytes += e.data.length;
    for (const [k] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.delete(k);
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.bytes -= e.data.length;
    this.entries.delete(key);
  }

  /** Forget a target under every Accept (after a write to it). */
  invalidate(target: string): void {
    const path = pathOf(target);
    for (const k of [...this.entries.keys()]) if (pathOf(k.slice(k.indexOf(' ') + 1)) === path) this.delete(k);
  }
}

const MAX_CACHED_BODY = 64 * 1024 * 1024;

export function cache(store: ResponseCache | undefined, next: Exchange): Exchange {
  if (!store) return next;
  return async (req) => {
    if (req.method !== 'GET' || req.stream) {
      if (req.method !== 'GET') store.invalidate(req.target);
      return next(req);
    }
    const key = `${req.headers.accept ?? ''} ${req.target}`;
    const held = store.get(key);
    const headers = { ...req.headers };
    if (held?.etag) headers['if-none-match'] = held.etag;
    if (held?.lastModified) headers['if-modified-since'] = held.lastModified;
    const res = await next({ ...req, headers });
    if (res.status === 304 && held) {
      dump(res.body);
      return { status: 200, headers: { ...held.headers, ...res.headers }, body: bodyOf(held.data), fromCache: true };
    }
    const etag = res.headers.etag;
    const lastModified = res.headers['last-modified'];
    if (res.status !== 200 || (!etag && !lastModified)) return res;
    const { data, truncated } = await readBody(res.body, MAX_CACHED_BODY);
    if (truncated) throw new RangeError(`response to GET /${req.target} is over ${MAX_CACHED_BODY} bytes`);
    store.set(key, { ...(etag ? { etag } : {}), ...(lastModified ? { lastModified } : {}), headers: res.headers, data });
    return { ...res, body: bodyOf(data) } satisfies WireResponse;
  };
}

function pathOf(target: string): string {
  const i = target.indexOf('?');
  return i < 0 ? target : target.slice(0, i);
}

function positive(n: number, name: string): number {
  if (!Number.isSafeInteger(n) || n <= 0) throw new TypeError(`${name} must be a positive integer`);
  return n;
}
