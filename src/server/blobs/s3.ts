// The BlobStore port on S3 (blobs/port.ts): the bucket's `<prefix>/<key>` objects, shared by every
// server process. The AWS SDK is an optional peer dependency, loaded only when such a store is opened
// (`import()` survives the CommonJS build). Only the calls that S3-compatible services commonly
// implement are used (PutObject, multipart uploads, Get/Head/DeleteObject, DeleteObjects with
// Content-MD5, ListObjectsV2, ListMultipartUploads, HeadBucket): OpenStack Swift's s3api, for one,
// answers some others (lifecycle, legal hold) by doing something else (../shared/s3/README.md).
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open as openFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { Digester } from '../../digest';
import { AbortedError, isForgeError } from '../../errors';
import { notFound, ServiceError } from '../service-error';
import type { BlobArea, BlobStore, WriteOptions, WrittenBlob } from './port';
import { BlobStoreError, describeS3Location, parseS3Url, renderS3Url, type S3Location } from './s3-url';

type ClientModule = typeof import('@aws-sdk/client-s3');
type StorageModule = typeof import('@aws-sdk/lib-storage');
interface Sdk {
  readonly s3: ClientModule;
  readonly storage: StorageModule;
}

/** Static credentials, instead of the SDK's default chain (environment, shared files, roles). */
export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export interface S3BlobsOptions {
  /** Where `scratchPath` puts a builder's file before `adopt` uploads it; the node's temporary folder by default. */
  readonly scratchDir?: string;
  /** Bytes per part of a multipart upload (8 MiB by default, 5 MiB at least): a larger object gets larger parts. */
  readonly partSize?: number;
  /** Parts in flight at once (2 by default): a write holds about (queueSize + 1) × partSize in memory. */
  readonly queueSize?: number;
  /** By default the SDK's chain: the URL never carries credentials. */
  readonly credentials?: S3Credentials;
}

const MIB = 1024 * 1024;
const MIN_PART = 5 * MIB;
const DEFAULT_PART = 8 * MIB;
/** A part size this large already takes an object of 640 GiB; more would cost memory on every write. */
const MAX_PART = 64 * MIB;
// S3's limit; the loopback Swift is configured with the same (its own default is 1000).
const MAX_PARTS = 10_000;
/** DeleteObjects takes at most this many keys per request. */
const DELETE_BATCH = 1000;
const AREAS: readonly BlobArea[] = ['files', 'images', 'layers'];

const tooLarge = (maxBytes: number): ServiceError => new ServiceError(413, `upload larger than the limit of ${maxBytes} bytes`);

/** The aborting signal's reason when it is an error (the job's AbortedError), else a plain AbortedError. */
const abortError = (signal: AbortSignal | undefined, what: string): Error =>
  signal?.reason instanceof Error ? signal.reason : new AbortedError(`${what} aborted`);

/** Whether `key` is `files/<name>` or `images/<name>` with one plain name (what the database keeps). */
function isKey(key: string): boolean {
  const [area, name, ...deeper] = key.split('/');
  return AREAS.some((a) => a === area) && name !== undefined && name !== '' && name !== '.' && name !== '..' && deeper.length === 0;
}

/** A key read from the database is checked before any request: it never names another object of the bucket. */
function checkKey(key: string): string {
  if (!isKey(key)) throw new BlobStoreError('key', `${JSON.stringify(key)} is not a blob key: one name directly inside ${AREAS.join('/ or ')}/`);
  return key;
}

/** A part size that keeps the object within MAX_PARTS parts when its size (or its limit) is known. */
function partSizeFor(bytes: number | undefined, base: number): number {
  if (bytes === undefined || !Number.isFinite(bytes) || bytes <= 0) return base;
  return Math.min(Math.max(base, Math.ceil(bytes / (MAX_PARTS - 1) / MIB) * MIB), Math.max(base, MAX_PART));
}

/** Opens the store a configuration string (`s3://…`, s3-url.ts) names; no request is sent yet (`ping` sends one). */
export async function openS3Blobs(config: string | S3Location, o: S3BlobsOptions = {}): Promise<S3Blobs> {
  return S3Blobs.connect(config, o);
}

export class S3Blobs implements BlobStore {
  readonly backend = 's3' as const;
  readonly shared = true;
  private readonly bucket: string;
  private readonly scratchDir: string;
  private readonly partSize: number;
  private readonly queueSize: number;

  private constructor(
    readonly where: string,
    private readonly loc: S3Location,
    private readonly sdk: Sdk,
    private readonly client: S3Client,
    o: S3BlobsOptions,
  ) {
    this.bucket = loc.bucket;
    this.scratchDir = o.scratchDir ?? tmpdir();
    this.partSize = Math.max(MIN_PART, o.partSize ?? DEFAULT_PART);
    this.queueSize = Math.max(1, o.queueSize ?? 2);
  }

  static async connect(config: string | S3Location, o: S3BlobsOptions = {}): Promise<S3Blobs> {
    // A location built by hand is held to the same rules as a parsed one.
    const loc = parseS3Url(typeof config === 'string' ? config : renderS3Url(config));
    const sdk = await loadSdk();
    const client = new sdk.s3.S3Client({
      ...(loc.endpoint !== undefined ? { endpoint: loc.endpoint } : {}),
      ...(loc.region !== undefined ? { region: loc.region } : {}),
      ...(o.credentials !== undefined ? { credentials: o.credentials } : {}),
      forcePathStyle: loc.forcePathStyle,
      // Checksums only where the API requires one: the SDK's default sends streamed bodies as
      // `aws-chunked` with a CRC32 trailer, which S3-compatible services (Swift's s3api) refuse with 501.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: 10_000 },
    });
    let region: string;
    try {
      region = await client.config.region();
    } catch {
      client.destroy();
      throw new BlobStoreError('config', `no region for ${describeS3Location(loc, undefined)}: add ?region=… to the URL or set AWS_REGION`);
    }
    // The endpoint the SDK itself takes when the URL has none (AWS_ENDPOINT_URL_S3, a profile's endpoint_url), for `where` only.
    const configured = loc.endpoint ?? (await client.config.serviceConfiguredEndpoint?.().catch(() => undefined));
    return new S3Blobs(describeS3Location(loc, configured, region), loc, sdk, client, o);
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }

  /**
   * Streams `source` into a multipart upload (one PutObject when it fits in a part) with its sha256
   * and md5, holding about (queueSize + 1) parts. Past `maxBytes`, a failing source or an aborted
   * `signal`, the upload is aborted and nothing is kept. The digests are always computed here.
   */
  async write(source: AsyncIterable<Uint8Array>, area: BlobArea, suffix: string, maxBytes: number, expectedBytes?: number, o: WriteOptions = {}): Promise<WrittenBlob> {
    const key = this.fresh(area, suffix);
    const digests = new Digester(['sha256', 'md5']);
    const size = expectedBytes !== undefined && Number.isFinite(expectedBytes) ? expectedBytes : maxBytes;
    await this.upload(key, source, { digests, maxBytes, partSize: partSizeFor(size, this.partSize), signal: o.signal, what: 'blob write' });
    return { key, ...digests.digests() };
  }

  scratchPath(suffix: string): string {
    if (!isKey(`files/${suffix}`)) throw new BlobStoreError('key', `${JSON.stringify(suffix)} is not a plain file name`);
    return join(this.scratchDir, `af-scratch-${randomBytes(8).toString('hex')}-${suffix}`);
  }

  /**
   * Uploads the local file, then removes it. On failure nothing is kept in the bucket and the file
   * stays where it is: the caller still owns it (and may retry).
   */
  async adopt(localPath: string, area: BlobArea, suffix: string, signal?: AbortSignal): Promise<string> {
    const key = this.fresh(area, suffix);
    await this.copyIn(localPath, key, signal, 'blob upload');
    await rm(localPath, { force: true });
    return key;
  }

  async copyIn(localPath: string, key: string, signal?: AbortSignal, what = 'blob copy'): Promise<void> {
    if (signal?.aborted) throw abortError(signal, what);
    const { size } = await stat(localPath);
    const file = createReadStream(localPath);
    try {
      await this.upload(key, file, { length: size, partSize: partSizeFor(size, this.partSize), signal, what });
    } finally {
      file.destroy();
    }
  }

  /** The object's bytes; a missing one is a 404 ServiceError (service-error.ts), as the routes answer it. */
  async open(key: string): Promise<Readable> {
    const Key = this.objectKey(key);
    try {
      const { Body } = await this.client.send(new this.sdk.s3.GetObjectCommand({ Bucket: this.bucket, Key }));
      if (!(Body instanceof Readable)) throw new BlobStoreError('s3', `GetObject of ${key} in ${this.where} gave no stream`);
      return Body;
    } catch (e) {
      throw this.failure('GetObject', e, key);
    }
  }

  /** Streams the object to a new file `dest` (0600); a partial file is removed, an existing one never touched. */
  async fetch(key: string, dest: string, signal?: AbortSignal): Promise<void> {
    const Key = this.objectKey(key);
    let body: Readable;
    let length: number | undefined;
    try {
      const r = await this.client.send(new this.sdk.s3.GetObjectCommand({ Bucket: this.bucket, Key }), signal ? { abortSignal: signal } : {});
      if (!(r.Body instanceof Readable)) throw new BlobStoreError('s3', `GetObject of ${key} in ${this.where} gave no stream`);
      body = r.Body;
      length = r.ContentLength;
    } catch (e) {
      throw this.failure('GetObject', e, key, signal);
    }
    let fh;
    try {
      fh = await openFile(dest, 'wx', 0o600);
    } catch (e) {
      body.destroy();
      throw e;
    }
    try {
      await pipeline(body, fh.createWriteStream(), signal ? { signal } : {});
      const got = (await stat(dest)).size;
      if (length !== undefined && got !== length) throw new BlobStoreError('s3', `GetObject of ${key} in ${this.where} ended after ${got} of ${length} bytes`);
    } catch (e) {
      await fh.close().catch(() => undefined);
      await rm(dest, { force: true });
      throw signal?.aborted ? abortError(signal, 'blob fetch') : this.failure('GetObject', e, key);
    }
  }

  async remove(key: string | undefined): Promise<void> {
    if (!key) return;
    const Key = this.objectKey(key);
    try {
      await this.client.send(new this.sdk.s3.DeleteObjectCommand({ Bucket: this.bucket, Key }));
    } catch (e) {
      if (this.isMissing(e)) return;
      throw this.failure('DeleteObject', e, key);
    }
  }

  /**
   * Deletes the objects under the prefix shaped as this store's keys that `live` does not name and
   * that are older than `graceMs` (all of them when it is 0), and aborts the multipart uploads under
   * it begun more than `graceMs` ago (interrupted writes). Other objects under the prefix are left alone.
   */
  async sweep(live: ReadonlySet<string>, graceMs: number): Promise<{ removed: number }> {
    const before = Date.now() - graceMs;
    const old = (d: Date | undefined): boolean => graceMs <= 0 || (d !== undefined && d.getTime() <= before);
    const under = this.loc.prefix ? `${this.loc.prefix}/` : '';
    const { s3 } = this.sdk;
    let removed = 0;
    let batch: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.call('ListObjectsV2', () => this.client.send(new s3.ListObjectsV2Command({ Bucket: this.bucket, Prefix: under, ContinuationToken: token })));
      for (const { Key, LastModified } of page.Contents ?? []) {
        if (Key === undefined || !Key.startsWith(under)) continue;
        const rel = Key.slice(under.length);
        if (!isKey(rel) || live.has(rel) || !old(LastModified)) continue;
        batch.push(Key);
        if (batch.length === DELETE_BATCH) {
          removed += await this.deleteBatch(batch);
          batch = [];
        }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    if (batch.length) removed += await this.deleteBatch(batch);

    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      const page = await this.call('ListMultipartUploads', () => this.client.send(new s3.ListMultipartUploadsCommand({
        Bucket: this.bucket, Prefix: under, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker,
      })));
      for (const { Key, UploadId, Initiated } of page.Uploads ?? []) {
        if (Key === undefined || UploadId === undefined || !isKey(Key.slice(under.length)) || !old(Initiated)) continue;
        if (await this.abortUpload(Key, UploadId)) removed++;
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker);
    return { removed };
  }

  async ping(): Promise<void> {
    await this.call('HeadBucket', () => this.client.send(new this.sdk.s3.HeadBucketCommand({ Bucket: this.bucket })));
  }

  /** A fresh key: a random prefix keeps two writers of the same record apart, and keys are never reused. */
  private fresh(area: BlobArea, suffix: string): string {
    return checkKey(`${area}/${randomBytes(8).toString('hex')}-${suffix}`);
  }

  private objectKey(key: string): string {
    checkKey(key);
    return this.loc.prefix ? `${this.loc.prefix}/${key}` : key;
  }

  /**
   * lib-storage's Upload of `source` under `key`: multipart with `queueSize` parts in flight, or one
   * PutObject when it fits in a part. The source is read through `measured` (digests, limit, signal);
   * whatever fails, lib-storage aborts its multipart upload once its parts in flight are done, and
   * `discard` then removes what may remain under the key (a PutObject that completed, an abort that failed).
   */
  private async upload(
    key: string,
    source: AsyncIterable<Uint8Array>,
    o: { digests?: Digester<'sha256' | 'md5'>; maxBytes?: number; length?: number; partSize: number; signal: AbortSignal | undefined; what: string },
  ): Promise<void> {
    const Key = this.objectKey(key);
    const stop: { error?: unknown } = {};
    // Two chunks read ahead at most: the parts lib-storage holds are the memory that counts.
    const body = Readable.from(measured(source, stop, o), { objectMode: true, highWaterMark: 2 });
    const up = new this.sdk.storage.Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body: body, ContentType: 'application/octet-stream', ContentLength: o.length },
      partSize: o.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    try {
      await up.done();
      if (o.signal?.aborted) throw abortError(o.signal, o.what);
    } catch (e) {
      body.destroy();
      await this.discard(Key);
      // The source's own error (413, a client gone, the signal) rather than lib-storage's rendering of it.
      if ('error' in stop) throw stop.error;
      throw this.failure('upload', e, key, o.signal);
    }
  }

  /** Best effort after a failed upload: the object and any multipart upload under this fresh key go. */
  private async discard(Key: string): Promise<void> {
    const { s3 } = this.sdk;
    await this.client.send(new s3.DeleteObjectCommand({ Bucket: this.bucket, Key })).catch(() => undefined);
    const page = await this.client.send(new s3.ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: Key })).catch(() => undefined);
    for (const u of page?.Uploads ?? []) {
      if (u.Key === Key && u.UploadId !== undefined) await this.abortUpload(Key, u.UploadId).catch(() => undefined);
    }
  }

  /** Aborts one multipart upload; false when it was already gone (another node's sweep). */
  private async abortUpload(Key: string, UploadId: string): Promise<boolean> {
    try {
      await this.client.send(new this.sdk.s3.AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId }));
      return true;
    } catch (e) {
      if (errorName(e) === 'NoSuchUpload') return false;
      throw this.failure('AbortMultipartUpload', e);
    }
  }

  /** One DeleteObjects request; the number deleted. S3-compatible services require its Content-MD5. */
  private async deleteBatch(keys: readonly string[]): Promise<number> {
    const r = await this.call('DeleteObjects', () => this.client.send(new this.sdk.s3.DeleteObjectsCommand({
      Bucket: this.bucket, ChecksumAlgorithm: 'MD5', Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
    })));
    const errors = (r.Errors ?? []).filter((x) => x.Code !== 'NoSuchKey');
    const first = errors[0];
    if (first) throw new BlobStoreError('s3', `DeleteObjects in ${this.where} failed for ${errors.length} of ${keys.length} objects, first ${first.Key ?? '?'}: ${first.Code ?? '?'} ${first.Message ?? ''}`.trim(), undefined, first.Code);
    return keys.length - (r.Errors?.length ?? 0);
  }

  /** Runs one request; its failure as `failure` renders it. */
  private async call<T>(op: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (e) {
      throw this.failure(op, e);
    }
  }

  private isMissing(e: unknown): boolean {
    const name = errorName(e);
    return name === 'NoSuchKey' || (name === 'NotFound' && statusOf(e) === 404);
  }

  /**
   * The error to throw for a failed request: our own errors as they are, an abort as the signal's
   * reason, a missing object as a 404 (when `key` names one), anything else a BlobStoreError that
   * says which call failed where, with the service's status and code (never the credentials).
   */
  private failure(op: string, e: unknown, key?: string, signal?: AbortSignal): Error {
    if (isForgeError(e)) return e;
    if (signal?.aborted) return abortError(signal, op);
    if (key !== undefined && this.isMissing(e)) return notFound('the file is missing from the blob store');
    const status = statusOf(e);
    const code = errorName(e);
    const message = e instanceof Error ? e.message.slice(0, 300) : String(e).slice(0, 300);
    const said = message && message !== code && message !== 'UnknownError' ? `: ${message}` : '';
    return new BlobStoreError('s3', `${op}${key !== undefined ? ` of ${key}` : ''} in ${this.where} failed: ${status !== undefined ? `${status} ` : ''}${code ?? 'error'}${said}`, status, code);
  }
}

/**
 * The source as lib-storage reads it: each chunk hashed (when `digests`) and counted against
 * `maxBytes`; a failing source, the limit or the signal end it with their error, kept in `stop`
 * so the caller rethrows it rather than lib-storage's rendering.
 */
async function* measured(
  source: AsyncIterable<Uint8Array>,
  stop: { error?: unknown },
  o: { digests?: Digester<'sha256' | 'md5'>; maxBytes?: number; signal: AbortSignal | undefined; what: string },
): AsyncGenerator<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  let finished = false;
  let size = 0;
  try {
    for (;;) {
      const r = await nextOrAbort(it, o.signal, o.what);
      if (r.done) {
        finished = true;
        return;
      }
      const chunk = r.value;
      size += chunk.byteLength;
      if (o.maxBytes !== undefined && size > o.maxBytes) throw tooLarge(o.maxBytes);
      o.digests?.update(chunk);
      yield chunk;
    }
  } catch (e) {
    stop.error = e;
    throw e;
  } finally {
    // Ends the source (a request stream is destroyed): nothing reads it any more. Not awaited: a stalled source may never answer.
    if (!finished) void it.return?.()?.catch(() => undefined);
  }
}

/**
 * The iterator's next result, or the signal's error as soon as it fires: a source that stalls (a
 * client that stopped sending) does not hold the abort. A listener per call, removed when it settles
 * (a race with one long-lived promise would keep every chunk it ever passed).
 */
function nextOrAbort<T>(it: AsyncIterator<T>, signal: AbortSignal | undefined, what: string): Promise<IteratorResult<T>> {
  if (!signal) return it.next();
  if (signal.aborted) return Promise.reject(abortError(signal, what));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal, what));
    signal.addEventListener('abort', onAbort, { once: true });
    it.next().then(
      (r) => {
        signal.removeEventListener('abort', onAbort);
        resolve(r);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

async function loadSdk(): Promise<Sdk> {
  try {
    const [s3, storage] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]);
    return { s3, storage };
  } catch (e) {
    throw new BlobStoreError('config', `the S3 blob store needs the packages @aws-sdk/client-s3 and @aws-sdk/lib-storage (npm install @aws-sdk/client-s3 @aws-sdk/lib-storage): ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
}

function errorName(e: unknown): string | undefined {
  const x = e as { Code?: unknown; name?: unknown } | null;
  const name = typeof x?.Code === 'string' ? x.Code : x?.name;
  return typeof name === 'string' ? name : undefined;
}

function statusOf(e: unknown): number | undefined {
  const s = (e as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode;
  return typeof s === 'number' ? s : undefined;
}
