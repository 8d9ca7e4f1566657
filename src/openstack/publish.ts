// The publication backend's entry points (docs/contracts.md, OpenStack): publish a finished image
// file to Glance, delete a published image, read one back. A failed or aborted publication deletes
// the image it created, so nothing half-made is left in the cloud.
import { stat } from 'node:fs/promises';
import { isForgeError, messageOf } from '../errors';
import { OpenStackError } from './errors';
import { createImage, deleteImage, getImage, GLANCE_DISK_FORMATS, IMAGE_ID, uploadData, waitForActive,
  type GlanceDiskFormat, type GlanceImage, type StreamedDigests } from './glance';
import { Connection, type OpenStackTimeouts } from './http';
import { authenticate, type OpenStackAccess, type Session } from './keystone';

export interface PublishProgress {
  readonly bytesLoaded: number;
  readonly bytesTotal: number;
  readonly message: string;
}

export interface PublishRequest extends OpenStackAccess {
  /**
   * The Glance image's id, chosen by the caller (a UUID) so that publishing again after a lost attempt
   * is idempotent: an active image of that id with this file's size and checksums is kept as the result,
   * anything else of that id (a half-made upload) is deleted and made again. Absent: Glance picks one.
   */
  readonly imageId?: string | undefined;
  /** Glance `name`. */
  readonly displayName: string;
  /** Glance `visibility`: public (needs the admin role on most clouds) or private. */
  readonly publicImage: boolean;
  readonly diskFormat: GlanceDiskFormat;
  /** Path of the finished image file. */
  readonly file: string;
  /** Its size in bytes; must match the file (checked before anything is sent). */
  readonly size: number;
  /** Its recorded SHA-256 (hex); when given, the streamed bytes must match it too. */
  readonly sha256?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((p: PublishProgress) => void) | undefined;
  readonly timeouts?: OpenStackTimeouts | undefined;
}

export interface PublishResult {
  /** The Glance image id (the publication's `cloudId`). */
  readonly imageId: string;
  readonly md5: string;
  readonly sha512: string;
}

export interface ImageRequest extends OpenStackAccess {
  readonly imageId: string;
  readonly signal?: AbortSignal | undefined;
  readonly timeouts?: OpenStackTimeouts | undefined;
}

/** Progress is reported at most this often during the upload (plus the first and last byte). */
const PROGRESS_EVERY_MS = 250;

export async function publishToGlance(req: PublishRequest): Promise<PublishResult> {
  checkRequest(req);
  await checkFile(req.file, req.size);
  const report = req.onProgress ?? (() => undefined);
  const total = req.size;
  return withConnection(req, async (conn) => {
    conn.throwIfAborted();
    report({ bytesLoaded: 0, bytesTotal: total, message: 'authenticating with Keystone' });
    const session = await authenticate(conn, req);
    conn.throwIfAborted();
    report({ bytesLoaded: 0, bytesTotal: total, message: 'creating the Glance image' });
    const asked = { id: req.imageId, name: req.displayName, diskFormat: req.diskFormat, visibility: req.publicImage ? 'public' as const : 'private' as const };
    let created = await createImage(conn, session, asked);
    if (!created) {
      // The id exists: an earlier attempt of this publication made it.
      const earlier = await getImage(conn, session, req.imageId!);
      if (earlier?.status === 'active' && earlier.size === total && (req.sha256 === undefined || earlier.osHashAlgo !== 'sha256' || earlier.osHashValue === req.sha256)) {
        report({ bytesLoaded: total, bytesTotal: total, message: 'published (by an earlier attempt)' });
        return { imageId: earlier.id, md5: earlier.checksum ?? '', sha512: earlier.osHashAlgo === 'sha512' ? (earlier.osHashValue ?? '') : '' };
      }
      await deleteImage(conn, session, req.imageId!);
      created = await createImage(conn, session, asked);
      if (!created) throw new OpenStackError('glance', `image ${req.imageId!} still exists after it was deleted; publish again later`);
    }
    try {
      conn.throwIfAborted();
      let last = 0;
      const digests = await uploadData(conn, session, created.id, {
        file: req.file, size: total, sha256: req.sha256 !== undefined,
        onBytes(loaded) {
          const now = Date.now();
          if (loaded < total && now - last < PROGRESS_EVERY_MS) return;
          last = now;
          report({ bytesLoaded: loaded, bytesTotal: total, message: 'uploading to Glance' });
        },
      });
      report({ bytesLoaded: total, bytesTotal: total, message: 'waiting for the image to become active' });
      const image = await waitForActive(conn, session, created.id);
      verify(conn, req, digests, image);
      report({ bytesLoaded: total, bytesTotal: total, message: 'published' });
      return { imageId: created.id, md5: digests.md5, sha512: digests.sha512 };
    } catch (e) {
      throw await withCleanup(conn, session, created.id, e);
    }
  });
}

/** Deletes a Glance image; resolves `{deleted: false}` when it was already gone. */
export async function deleteGlanceImage(req: ImageRequest): Promise<{ deleted: boolean }> {
  checkImageId(req.imageId);
  return withConnection(req, async (conn) => {
    const session = await authenticate(conn, req);
    return { deleted: await deleteImage(conn, session, req.imageId) };
  });
}

/** Reads an image's status, size and checksums from Glance; undefined when it does not exist. */
export async function getGlanceImage(req: ImageRequest): Promise<GlanceImage | undefined> {
  checkImageId(req.imageId);
  return withConnection(req, async (conn) => getImage(conn, await authenticate(conn, req), req.imageId));
}

async function withConnection<T>(req: { signal?: AbortSignal | undefined; timeouts?: OpenStackTimeouts | undefined }, fn: (c: Connection) => Promise<T>): Promise<T> {
  const conn = new Connection(req.timeouts, req.signal);
  try {
    return await fn(conn);
  } finally {
    await conn.close();
  }
}

/** Deletes the half-made image, then hands back the original error (noting an image that could not be deleted). */
async function withCleanup(conn: Connection, s: Session, id: string, e: unknown): Promise<unknown> {
  try {
    await deleteImage(conn, s, id);
    if (e instanceof OpenStackError) e.imageId ??= id;
  } catch (d) {
    const why = messageOf(d);
    if (e instanceof OpenStackError) e.orphanImageId = id;
    if (e instanceof Error) e.message += `; the image ${id} could not be deleted (${why})`;
  }
  return e;
}

function verify(conn: Connection, req: PublishRequest, d: StreamedDigests, img: GlanceImage): void {
  const details = { service: 'glance' as const, imageId: img.id };
  const bad = (what: string) => conn.error('checksum', `image ${img.id}: ${what}`, details);
  if (d.bytes !== req.size) throw bad(`streamed ${d.bytes} bytes, expected ${req.size}`);
  if (img.size !== null && img.size !== req.size) throw bad(`Glance stored ${img.size} bytes, sent ${req.size}`);
  if (req.sha256 !== undefined && d.sha256 !== req.sha256.toLowerCase()) {
    throw bad(`the file's SHA-256 ${d.sha256 ?? '?'} differs from the recorded ${req.sha256}`);
  }
  let compared = 0;
  if (img.checksum !== null) {
    if (img.checksum.toLowerCase() !== d.md5) throw bad(`Glance checksum (MD5) ${img.checksum} differs from the sent data's ${d.md5}`);
    compared++;
  }
  const ours = img.osHashAlgo === 'sha512' ? d.sha512 : img.osHashAlgo === 'sha256' ? d.sha256 : undefined;
  if (img.osHashValue !== null && ours !== undefined) {
    if (img.osHashValue.toLowerCase() !== ours) throw bad(`Glance ${img.osHashAlgo} differs from the sent data's`);
    compared++;
  }
  if (compared === 0) throw bad('Glance reported no checksum to verify the upload against');
}

function checkRequest(req: PublishRequest): void {
  if (req.imageId !== undefined) checkImageId(req.imageId);
  const need = ['keystoneUrl', 'login', 'password', 'domain', 'project', 'displayName', 'file'] as const;
  for (const k of need) {
    if (typeof req[k] !== 'string' || req[k].trim() === '') throw new OpenStackError('input', `${k} is required`);
  }
  if (req.displayName.length > 255) throw new OpenStackError('input', 'displayName is longer than 255 characters (Glance limit)');
  if (!(GLANCE_DISK_FORMATS as readonly string[]).includes(req.diskFormat)) {
    throw new OpenStackError('input', `diskFormat must be one of ${GLANCE_DISK_FORMATS.join(', ')}`);
  }
  if (!Number.isSafeInteger(req.size) || req.size < 0) throw new OpenStackError('input', 'size must be a non-negative integer');
  if (req.sha256 !== undefined && !/^[0-9a-f]{64}$/i.test(req.sha256)) throw new OpenStackError('input', 'sha256 must be 64 hex digits');
}

function checkImageId(id: string): void {
  if (typeof id !== 'string' || !IMAGE_ID.test(id)) throw new OpenStackError('input', 'imageId is not a Glance image id');
}

async function checkFile(file: string, size: number): Promise<void> {
  const st = await stat(file).catch((e: unknown) => {
    const code = isErrno(e) ? e.code : 'error';
    throw new OpenStackError('input', `image file ${file} cannot be read (${code})`);
  });
  if (!st.isFile()) throw new OpenStackError('input', `image file ${file} is not a regular file`);
  if (st.size !== size) throw new OpenStackError('input', `image file ${file} has ${st.size} bytes, not the stated ${size}`);
}

function isErrno(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && 'code' in e && !isForgeError(e);
}
