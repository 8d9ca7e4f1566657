// Glance v2 image calls (openstack/README.md): create → 201 `queued`; PUT file → 204 then `active`;
// `checksum` is MD5 and `os_hash_value` uses `os_hash_algo` (sha512 by default).
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Digester } from '../digest';
import { isRecord, type Answer, type CallOptions, type Connection } from './http';
import type { Session } from './keystone';

/** The disk formats Glance accepts that an appliance image can have. */
export const GLANCE_DISK_FORMATS = ['raw', 'qcow2', 'vmdk', 'vhd', 'vhdx', 'vdi', 'iso'] as const;
export type GlanceDiskFormat = (typeof GLANCE_DISK_FORMATS)[number];

/** What Glance says about an image (the fields we use). */
export interface GlanceImage {
  readonly id: string;
  readonly name: string | null;
  /** `queued`, `saving`, `active`, `killed`, `deleted`, `pending_delete`, … */
  readonly status: string;
  readonly size: number | null;
  readonly checksum: string | null;
  readonly osHashAlgo: string | null;
  readonly osHashValue: string | null;
  readonly visibility: string | null;
  readonly diskFormat: string | null;
  /** `vmware_disktype`: set to `streamOptimized` on the VMDKs this module publishes. */
  readonly vmwareDiskType: string | null;
}

export interface StreamedDigests {
  readonly bytes: number;
  readonly md5: string;
  readonly sha512: string;
  readonly sha256?: string | undefined;
}

/** Glance ids are UUIDs; anything else is refused before it can reach a URL path. */
export const IMAGE_ID = /^[A-Za-z0-9-]{1,64}$/;

const G = 'glance' as const;

/**
 * Creates the image (with the caller's `id` when given); undefined when an image of that id exists
 * already (Glance's 409): the caller decides whether it is its own finished one.
 */
export async function createImage(
  conn: Connection, s: Session, req: { id?: string | undefined; name: string; diskFormat: GlanceDiskFormat; visibility: 'public' | 'private' },
): Promise<GlanceImage | undefined> {
  const o = glanceCall(s, 'POST', '/images', `create image "${req.name}"`);
  // Not abortable: once sent, Glance may create the image; we must learn its id to delete it.
  const a = await conn.call({
    ...o, headers: auth(s), abortable: false,
    json: {
      ...(req.id !== undefined ? { id: req.id } : {}),
      name: req.name, disk_format: req.diskFormat, container_format: 'bare', visibility: req.visibility,
      // Our VMDKs are streamOptimized; Nova's VMware driver reads the subformat from this property (default: preallocated).
      ...(req.diskFormat === 'vmdk' ? { vmware_disktype: 'streamOptimized' } : {}),
    },
  });
  if (a.status === 409 && req.id !== undefined) return undefined;
  if (a.status !== 201) throw failure(conn, o, a);
  const img = imageOf(a.json);
  if (!img) throw conn.error('glance', `${o.what}: Glance answered 201 without an image id`, { service: G });
  return img;
}

/** The image, or undefined when Glance does not know it (404). */
export async function getImage(conn: Connection, s: Session, id: string): Promise<GlanceImage | undefined> {
  const o = glanceCall(s, 'GET', `/images/${encodeURIComponent(id)}`, `read image ${id}`);
  const a = await conn.call({ ...o, headers: auth(s), abortable: false });
  if (a.status === 404) return undefined;
  if (a.status !== 200) throw failure(conn, o, a, id);
  const img = imageOf(a.json);
  if (!img) throw conn.error('glance', `${o.what}: Glance answered 200 without an image`, { service: G, imageId: id });
  return img;
}

/** Deletes the image; false when it was already gone (404 tolerated). Never aborted half-way. */
export async function deleteImage(conn: Connection, s: Session, id: string): Promise<boolean> {
  const o = glanceCall(s, 'DELETE', `/images/${encodeURIComponent(id)}`, `delete image ${id}`);
  const a = await conn.call({ ...o, headers: auth(s), abortable: false });
  if (a.status === 404) return false;
  if (a.status !== 204 && a.status !== 200) throw failure(conn, o, a, id);
  return true;
}

/**
 * Streams the file into the image with an explicit Content-Length, hashing as it goes (memory stays
 * at one chunk). `onBytes` gets the running total after each chunk handed to the socket.
 */
export async function uploadData(
  conn: Connection, s: Session, id: string,
  req: { file: string; size: number; sha256: boolean; onBytes(loaded: number): void },
): Promise<StreamedDigests> {
  const o = glanceCall(s, 'PUT', `/images/${encodeURIComponent(id)}/file`, `upload data of image ${id}`);
  const d = new Digester<'md5' | 'sha512' | 'sha256'>(req.sha256 ? ['md5', 'sha512', 'sha256'] : ['md5', 'sha512']);
  const a = await conn.call({
    ...o,
    headers: { ...auth(s), 'content-type': 'application/octet-stream', 'content-length': String(req.size) },
    body: Readable.from(hashedChunks(req.file, d, req.onBytes), { objectMode: false }),
    headersTimeoutMs: conn.timeouts.uploadIdleTimeoutMs,
  });
  if (a.status !== 204 && a.status !== 200) throw failure(conn, o, a, id);
  const { size, md5, sha512, sha256 } = d.digests();
  return { bytes: size, md5, sha512, sha256: req.sha256 ? sha256 : undefined };
}

/** Polls until `active` within `activeTimeoutMs`; a dead end (`killed`, back to `queued`, …) fails at once. */
export async function waitForActive(conn: Connection, s: Session, id: string): Promise<GlanceImage> {
  const { activeTimeoutMs, pollMs } = conn.timeouts;
  const deadline = Date.now() + activeTimeoutMs;
  for (;;) {
    const img = await getImage(conn, s, id);
    if (!img) throw conn.error('glance', `image ${id} disappeared from Glance before it became active`, { service: G, imageId: id });
    if (img.status === 'active') return img;
    if (!['saving', 'uploading', 'importing'].includes(img.status)) {
      throw conn.error('glance', `image ${id} is ${img.status} after its upload, not active`, { service: G, imageId: id });
    }
    if (Date.now() + pollMs > deadline) {
      throw conn.error('timeout', `image ${id} still ${img.status} after ${activeTimeoutMs} ms`, { service: G, imageId: id });
    }
    try {
      await sleep(pollMs, undefined, { signal: conn.signal });
    } catch {
      throw conn.aborted();
    }
  }
}

async function* hashedChunks(
  file: string, d: Digester<'md5' | 'sha512' | 'sha256'>, onBytes: (loaded: number) => void,
): AsyncGenerator<Uint8Array> {
  // for-await closes the file when undici stops pulling (abort, dropped connection).
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    d.update(chunk);
    yield chunk;
    onBytes(d.size); // after the chunk was handed to the socket
  }
}

function glanceCall(s: Session, method: CallOptions['method'], path: string, what: string) {
  return { service: G, method, url: `${s.glance}${path}`, what };
}

function auth(s: Session): Record<string, string> {
  return { 'x-auth-token': s.token };
}

function failure(conn: Connection, o: Pick<CallOptions, 'service' | 'what'>, a: Answer, imageId?: string) {
  const kind = a.status === 401 ? 'auth' : a.status === 403 ? 'forbidden' : 'glance';
  return conn.error(kind, conn.describe(o, a), { service: G, status: a.status, imageId });
}

function imageOf(body: unknown): GlanceImage | undefined {
  if (!isRecord(body) || typeof body.id !== 'string') return undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    id: body.id,
    name: str(body.name),
    status: str(body.status) ?? 'unknown',
    size: typeof body.size === 'number' ? body.size : null,
    checksum: str(body.checksum),
    osHashAlgo: str(body.os_hash_algo),
    osHashValue: str(body.os_hash_value),
    visibility: str(body.visibility),
    diskFormat: str(body.disk_format),
    vmwareDiskType: str(body.vmware_disktype),
  };
}
