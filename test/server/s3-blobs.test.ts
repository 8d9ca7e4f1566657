// The BlobStore port on S3 (src/server/blobs/s3.ts) against a real S3 service: OpenStack Swift 2.30 with
// s3api on loopback (../shared/s3), with real SigV4 signatures. What the adapter wrote is read back
// through an independent client and Swift's own API, and digests are computed here from the original
// bytes. Without root or Debian the service cannot start and the service tests skip, saying why; the
// configuration string's tests need no service.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { inspect } from 'node:util';
import { CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError, isForgeError } from '../../src/errors';
import type { BlobStore } from '../../src/server/blobs/port';
import { openS3Blobs, type S3Blobs } from '../../src/server/blobs/s3';
import { BlobStoreError, describeS3Location, parseS3Url, renderS3Url } from '../../src/server/blobs/s3-url';
import { toServiceError } from '../../src/server/http/errors';
import { isServiceError } from '../../src/server/service-error';
import { s3Unavailable, startS3, type S3Service } from '../support/s3';
import { tempDir } from './helpers';

const MIB = 1024 * 1024;

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const md5 = (b: Uint8Array): string => createHash('md5').update(b).digest('hex');

/** `bytes` as a source of unknown length, in chunks of `chunk` bytes (what a request body looks like). */
async function* chunked(bytes: Buffer, chunk = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += chunk) {
    yield bytes.subarray(i, i + chunk);
    if (i % (4 * MIB) === 0) await delay(0);
  }
}

async function readAll(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of source) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('the s3:// configuration string', () => {
  it('parses the bucket, the prefix and the parameters, and renders them back', () => {
    expect(parseS3Url('s3://forge-test')).toEqual({ bucket: 'forge-test', prefix: '', forcePathStyle: false });
    expect(parseS3Url('s3://forge-test/')).toEqual({ bucket: 'forge-test', prefix: '', forcePathStyle: false });
    expect(parseS3Url('s3://forge-test/blobs/node-a/')).toEqual({ bucket: 'forge-test', prefix: 'blobs/node-a', forcePathStyle: false });
    const full = parseS3Url('s3://my.bucket-1/a_b/c.d?endpoint=http://127.0.0.1:8080/&region=us-east-1&path-style=true');
    expect(full).toEqual({ bucket: 'my.bucket-1', prefix: 'a_b/c.d', endpoint: 'http://127.0.0.1:8080', region: 'us-east-1', forcePathStyle: true });
    expect(parseS3Url('s3://forge-test?endpoint=https%3A%2F%2Fs3.example.net%2Fstorage%2F&path-style=0')).toEqual({
      bucket: 'forge-test', prefix: '', endpoint: 'https://s3.example.net/storage', forcePathStyle: false,
    });
    for (const text of ['s3://forge-test', 's3://forge-test/a/b', 's3://forge-test/a?endpoint=http%3A%2F%2F127.0.0.1%3A8080&region=eu-west-3&path-style=true']) {
      expect(renderS3Url(parseS3Url(text))).toBe(text);
      expect(parseS3Url(renderS3Url(parseS3Url(text)))).toEqual(parseS3Url(text));
    }
    expect(describeS3Location(full, undefined)).toBe('s3://my.bucket-1/a_b/c.d at http://127.0.0.1:8080');
    expect(describeS3Location(parseS3Url('s3://forge-test'), 'https://u:pw@s3.example.net/?X-Amz-Signature=abc')).toBe('s3://forge-test at https://s3.example.net');
    expect(describeS3Location(parseS3Url('s3://forge-test/p'), undefined, 'eu-west-3')).toBe('s3://forge-test/p at AWS S3 (eu-west-3)');
  });

  it('refuses what it cannot use with a BlobStoreError that quotes no credential', () => {
    const cases: Array<[string, RegExp]> = [
      ['http://forge-test/x', /not an s3:\/\/ URL/],
      ['s3://', /not a bucket name/],
      ['s3://Forge_Test', /not a bucket name/],
      ['s3://ab', /not a bucket name/],
      ['s3://192.168.10.1', /not a bucket name/],
      ['s3://forge-test/a/../b', /prefix/],
      ['s3://forge-test//a', /prefix/],
      ['s3://forge-test/a b', /prefix/],
      ['s3://forge-test#x', /fragment/],
      ['s3://forge-test?regin=us-east-1', /unknown parameter "regin"/],
      ['s3://forge-test?region=us-east-1&region=eu-west-1', /twice/],
      ['s3://forge-test?region=US%20East', /not a region/],
      ['s3://forge-test?path-style=yes', /path-style must be true or false/],
      ['s3://forge-test?endpoint=ftp://h', /http: or https:/],
      ['s3://forge-test?endpoint=nothing', /not a URL/],
      ['s3://forge-test?endpoint=http://h/?x=1', /no query/],
      ['s3://AKIAEXAMPLE:hunter2secret@forge-test/p', /credentials do not belong in the URL/],
      ['s3://forge-test?endpoint=http://AKIAEXAMPLE:hunter2secret@127.0.0.1:8080', /credentials do not belong in the endpoint/],
      ['s3://forge-test?aws_secret_access_key=hunter2secret', /unknown parameter/],
    ];
    for (const [text, why] of cases) {
      let e: unknown;
      try {
        parseS3Url(text);
      } catch (err) {
        e = err;
      }
      expect(e, text).toBeInstanceOf(BlobStoreError);
      expect(isForgeError(e, BlobStoreError) && e.kind, text).toBe('config');
      expect((e as BlobStoreError).code).toBe('E_BLOB_STORE');
      expect((e as Error).message, text).toMatch(why);
      expect(`${(e as Error).message} ${inspect(e)}`, text).not.toMatch(/hunter2|AKIAEXAMPLE/);
    }
  });
});

const unavailable = s3Unavailable();
if (unavailable) console.warn(`[s3-blobs] S3 tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('S3Blobs on a real S3 service (Swift s3api)', () => {
  let s3: S3Service;
  const stores: S3Blobs[] = [];
  let scratch: string;
  const open = async (sub: string, o: Parameters<typeof openS3Blobs>[1] = {}): Promise<S3Blobs> => {
    const store = await openS3Blobs(s3.url(sub), { credentials: s3.credentials, scratchDir: scratch, ...o });
    stores.push(store);
    return store;
  };
  const getObject = async (key: string): Promise<Buffer> => {
    const r = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    return readAll(r.Body as Readable);
  };
  /** Nothing under `<prefix>/<sub>/`: no object, no multipart upload, no segment in Swift's segments container. */
  const expectNothingUnder = async (sub: string): Promise<void> => {
    expect((await s3.objects(sub)).map((o) => o.Key)).toEqual([]);
    expect((await s3.uploads(sub)).map((u) => u.Key)).toEqual([]);
    expect(await s3.segments(sub)).toEqual([]);
  };

  beforeAll(async () => {
    scratch = tempDir('forge-s3-');
    const started = await startS3();
    if ('skip' in started) throw new Error(`the S3 service cannot start: ${started.skip}`);
    s3 = started;
  });
  afterAll(async () => {
    for (const s of stores) s.close();
    await s3?.cleanUp();
  });

  it('says where it is, and that it is shared', async () => {
    const store = await open('where');
    expect(store.backend).toBe('s3');
    expect(store.shared).toBe(true);
    expect(store.where).toBe(`s3://${s3.bucket}/${s3.prefix}/where at ${s3.endpoint}`);
    expect((store as BlobStore).localPath).toBeUndefined();
    await store.ping();
  });

  // Early in the file, before the other tests grow the heap: growth is measured from a heap still small.
  it('writes a 200 MiB stream with the memory of a few parts', async () => {
    const store = await open('memory');
    const total = 200 * MIB;
    const hash = createHash('sha256');
    async function* generated(): AsyncGenerator<Uint8Array> {
      for (let sent = 0; sent < total; sent += 256 * 1024) {
        const c = randomBytes(256 * 1024);
        hash.update(c);
        yield c;
      }
    }
    const start = process.memoryUsage().rss;
    let peak = start;
    let buffersAtPeak = 0;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      if (m.rss > peak) [peak, buffersAtPeak] = [m.rss, m.arrayBuffers];
    }, 20);
    const t0 = Date.now();
    let w;
    try {
      w = await store.write(generated(), 'images', 'big.raw', 1024 * MIB);
    } finally {
      clearInterval(sampler);
    }
    const seconds = (Date.now() - t0) / 1000;
    const growth = (peak - start) / MIB;
    console.log(`[s3-blobs] 200 MiB written in ${seconds.toFixed(1)} s (${(200 / seconds).toFixed(0)} MiB/s); RSS ${(start / MIB).toFixed(0)} MiB at the start, peak growth ${growth.toFixed(1)} MiB (Buffers then: ${(buffersAtPeak / MIB).toFixed(0)} MiB, parts in flight and ones the GC has not collected yet)`);
    expect(growth).toBeLessThanOrEqual(120);
    expect(w.size).toBe(total);
    expect(w.sha256).toBe(hash.digest('hex'));
    // Read back by the other client, streamed through a hash.
    const r = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${s3.prefix}/memory/${w.key}` }));
    const back = createHash('sha256');
    for await (const c of r.Body as Readable) back.update(c as Buffer);
    expect(back.digest('hex')).toBe(w.sha256);
  });

  it('writes a few KiB and reads them back, through open and through another client', async () => {
    const store = await open('small');
    const bytes = randomBytes(5 * 1024 + 3);
    const w = await store.write(chunked(bytes, 1000), 'files', 'notes.txt', 10 * MIB);
    expect(w.key).toMatch(/^files\/[0-9a-f]{16}-notes\.txt$/);
    expect(w).toEqual({ key: w.key, size: bytes.length, sha256: sha256(bytes), md5: md5(bytes) });
    expect(await readAll(await store.open(w.key))).toEqual(bytes);
    expect(await getObject(`${s3.prefix}/small/${w.key}`)).toEqual(bytes);
    // A second write of the same name is a new key: a key is written once.
    const again = await store.write(chunked(bytes), 'files', 'notes.txt', 10 * MIB);
    expect(again.key).not.toBe(w.key);
  });

  it('streams ~20 MiB of unknown length as a multipart upload with the right digests', async () => {
    const store = await open('large');
    const bytes = randomBytes(20 * MIB + 12345);
    const w = await store.write(chunked(bytes), 'images', 'disk.qcow2', 64 * MIB);
    expect(w).toEqual({ key: w.key, size: bytes.length, sha256: sha256(bytes), md5: md5(bytes) });
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${s3.prefix}/large/${w.key}` }));
    expect(head.ContentLength).toBe(bytes.length);
    // 8 MiB parts: a multipart upload of 3 parts, whose ETag is the md5 of the parts' md5s, "-3".
    expect(head.ETag).toMatch(/-3"?$/);
    expect(sha256(await getObject(`${s3.prefix}/large/${w.key}`))).toBe(sha256(bytes));
    expect(sha256(await readAll(await store.open(w.key)))).toBe(sha256(bytes));
    expect(await s3.uploads('large')).toEqual([]);
  });

  it('refuses a stream past maxBytes with a 413 and keeps nothing, not even a multipart upload', async () => {
    const store = await open('too-large');
    const e = await rejection(store.write(chunked(randomBytes(12 * MIB)), 'files', 'big.iso', 10 * MIB));
    expect(isServiceError(e) && e.statusCode).toBe(413);
    expect((e as Error).message).toBe(`upload larger than the limit of ${10 * MIB} bytes`);
    await expectNothingUnder('too-large');
  });

  it('keeps nothing when the source fails midway (a client that disconnects)', async () => {
    const store = await open('source-error');
    const cut = new Error('client went away');
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield* chunked(randomBytes(11 * MIB));
      throw cut;
    }
    expect(await rejection(store.write(failing(), 'files', 'cut.bin', 64 * MIB))).toBe(cut);
    await expectNothingUnder('source-error');
  });

  it('stops a write whose source stalls when its signal fires, and keeps nothing', async () => {
    const store = await open('aborted');
    // An iterator as a request stream's is: it can be told to end (return) while a read is pending.
    const bytes = randomBytes(9 * MIB);
    let at = 0;
    let ended = false;
    const stalled: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<Uint8Array>> => {
          if (at >= bytes.length) return new Promise(() => undefined); // a client that stopped sending
          at += 64 * 1024;
          return { done: false, value: bytes.subarray(at - 64 * 1024, at) };
        },
        return: async (): Promise<IteratorResult<Uint8Array>> => {
          ended = true;
          return { done: true, value: undefined };
        },
      }),
    };
    const ctrl = new AbortController();
    const t0 = Date.now();
    setTimeout(() => ctrl.abort(new AbortedError('cancelled')), 1500);
    const e = await rejection(store.write(stalled, 'files', 'stalled.bin', 64 * MIB, undefined, { signal: ctrl.signal }));
    expect(e).toBeInstanceOf(AbortedError);
    expect((e as Error).message).toBe('cancelled');
    expect(Date.now() - t0).toBeLessThan(15_000);
    await expectNothingUnder('aborted');
    // The abandoned source was told to end (a request stream is destroyed that way).
    expect(ended).toBe(true);
  });

  it('removes what it wrote when the signal fires after the last byte was read, while the object is being stored', async () => {
    const store = await open('aborted-late');
    const ctrl = new AbortController();
    async function* small(): AsyncGenerator<Uint8Array> {
      yield randomBytes(1024);
      // Fires once the source has ended, while its one PutObject is on its way.
      setTimeout(() => ctrl.abort(new AbortedError('cancelled late')), 0);
    }
    const e = await rejection(store.write(small(), 'files', 'late.bin', MIB, undefined, { signal: ctrl.signal }));
    expect((e as Error).message).toBe('cancelled late');
    await expectNothingUnder('aborted-late');
  });

  it('adopts a local file: uploaded, then the local file is gone', async () => {
    const store = await open('adopt');
    const path = store.scratchPath('disk.raw');
    expect(path.startsWith(scratch)).toBe(true);
    expect(store.scratchPath('disk.raw')).not.toBe(path);
    const bytes = randomBytes(9 * MIB + 7);
    writeFileSync(path, bytes);
    const key = await store.adopt(path, 'images', 'disk.raw');
    expect(key).toMatch(/^images\/[0-9a-f]{16}-disk\.raw$/);
    expect(existsSync(path)).toBe(false);
    expect(sha256(await getObject(`${s3.prefix}/adopt/${key}`))).toBe(sha256(bytes));

    // A failed adoption keeps nothing in the bucket and leaves the caller's file where it was.
    const kept = store.scratchPath('kept.raw');
    writeFileSync(kept, bytes);
    const ctrl = new AbortController();
    ctrl.abort(new AbortedError('stopping'));
    expect(await rejection(store.adopt(kept, 'images', 'kept.raw', ctrl.signal))).toBeInstanceOf(AbortedError);
    expect(sha256(readFileSync(kept))).toBe(sha256(bytes));
    expect((await s3.objects('adopt')).map((o) => o.Key)).toEqual([`${s3.prefix}/adopt/${key}`]);
    expect(await s3.uploads('adopt')).toEqual([]);
  });

  it('fetches a blob to a new local file, never over an existing one', async () => {
    const store = await open('fetch');
    const bytes = randomBytes(3 * MIB + 1);
    const { key } = await store.write(chunked(bytes), 'files', 'pkg.deb', 64 * MIB);
    const dest = join(scratch, 'fetched.deb');
    await store.fetch(key, dest);
    expect(sha256(readFileSync(dest))).toBe(sha256(bytes));
    expect(statSync(dest).mode & 0o777).toBe(0o600);
    // An existing file is refused and left as it was.
    writeFileSync(dest, 'mine');
    expect((await rejection(store.fetch(key, dest))) as NodeJS.ErrnoException).toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(dest, 'utf8')).toBe('mine');
    // A missing blob is a 404, and makes no file.
    const missing = join(scratch, 'missing.deb');
    const e = await rejection(store.fetch('files/0000000000000000-gone.deb', missing));
    expect(isServiceError(e) && e.statusCode).toBe(404);
    expect(existsSync(missing)).toBe(false);
  });

  it('answers a missing blob with a 404 ServiceError on open', async () => {
    const store = await open('missing');
    const e = await rejection(store.open('images/0000000000000000-none.qcow2'));
    expect(isServiceError(e) && e.statusCode).toBe(404);
  });

  it('removes a blob; an absent one is no error', async () => {
    const store = await open('remove');
    const { key } = await store.write(chunked(randomBytes(1000)), 'files', 'x.bin', MIB);
    await store.remove(key);
    const e = await rejection(s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${s3.prefix}/remove/${key}` })));
    expect((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(404);
    await store.remove(key);
    await store.remove(undefined);
    await expectNothingUnder('remove');
  });

  it('sweeps unreferenced old blobs and stale multipart uploads, and nothing else', async () => {
    const store = await open('sweep');
    const live = await store.write(chunked(randomBytes(2000)), 'files', 'live.bin', MIB);
    const dead = await store.write(chunked(randomBytes(2000)), 'images', 'dead.bin', MIB);
    const foreign = `${s3.prefix}/sweep/notes/readme.txt`;
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: foreign, Body: Buffer.from('not a blob of the store') }));
    const mpKey = `${s3.prefix}/sweep/images/0123456789abcdef-interrupted.raw`;
    const mp = await s3.client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: mpKey }));
    await s3.client.send(new UploadPartCommand({ Bucket: s3.bucket, Key: mpKey, UploadId: mp.UploadId, PartNumber: 1, Body: randomBytes(5 * MIB) }));
    expect((await s3.uploads('sweep')).map((u) => u.Key)).toEqual([mpKey]);

    // Younger than the grace period: a write whose record is not committed yet. Nothing goes.
    expect(await store.sweep(new Set([live.key]), 3_600_000)).toEqual({ removed: 0 });
    expect((await s3.objects('sweep')).length).toBe(3);
    expect((await s3.uploads('sweep')).length).toBe(1);

    await delay(1100); // S3's LastModified has a one-second resolution
    expect(await store.sweep(new Set([live.key]), 0)).toEqual({ removed: 2 });
    expect((await s3.objects('sweep')).map((o) => o.Key).sort()).toEqual([`${s3.prefix}/sweep/${live.key}`, foreign].sort());
    expect(await s3.uploads('sweep')).toEqual([]);
    expect(await s3.segments('sweep')).toEqual([]);
    expect(sha256(await readAll(await store.open(live.key)))).toBe(sha256((await getObject(`${s3.prefix}/sweep/${live.key}`))));
    const e = await rejection(store.open(dead.key));
    expect(isServiceError(e) && e.statusCode).toBe(404);
    expect(await store.sweep(new Set([live.key]), 0)).toEqual({ removed: 0 });
  });

  it('refuses a key that is not files/<name> or images/<name> before any request', async () => {
    // Nothing listens on port 1: a request would fail as a connection error, not as a bad key.
    const offline = await openS3Blobs(`s3://${s3.bucket}/x?endpoint=http://127.0.0.1:1&region=us-east-1&path-style=true`, { credentials: s3.credentials });
    stores.push(offline);
    const real = await open('keys');
    for (const store of [offline, real]) {
      for (const key of ['../x', 'files/a/b', 'tmp/x', 'files/', 'files/..', 'files', 'images/./x', '/files/x', 'files\u0000/x/y']) {
        for (const attempt of [() => store.open(key), () => store.remove(key), () => store.fetch(key, join(scratch, 'never'))]) {
          const e = await rejection(attempt());
          expect(isForgeError(e, BlobStoreError) && e.kind, key).toBe('key');
        }
      }
      expect(existsSync(join(scratch, 'never'))).toBe(false);
      // A suffix with a folder in it would make such a key: refused before the upload starts.
      const e = await rejection(store.write(chunked(randomBytes(10)), 'files', 'a/b', MIB));
      expect(isForgeError(e, BlobStoreError) && e.kind).toBe('key');
      expect(() => store.scratchPath('../escape')).toThrow(BlobStoreError);
    }
    // The offline store does fail as a connection error once a request is sent.
    const e = await rejection(offline.ping());
    expect(isForgeError(e, BlobStoreError) && e.kind).toBe('s3');
    await expectNothingUnder('keys');
  });

  it('fails ping with a wrong secret, in an error that names no secret', async () => {
    const wrong = `wrong-${randomBytes(12).toString('hex')}`;
    const store = await open('wrong-secret', { credentials: { accessKeyId: s3.credentials.accessKeyId, secretAccessKey: wrong } });
    const e = await rejection(store.ping());
    expect(e).toBeInstanceOf(BlobStoreError);
    expect((e as BlobStoreError).kind).toBe('s3');
    expect((e as BlobStoreError).status).toBe(403);
    expect((e as Error).message).toMatch(/HeadBucket in s3:\/\/.* at http:\/\/127\.0\.0\.1:\d+ failed: 403/);
    const shown = `${String(e)} ${(e as Error).stack ?? ''} ${JSON.stringify(e)} ${inspect(e, { depth: 10, showHidden: true })}`;
    expect(shown).not.toContain(wrong);
    expect(shown).not.toContain(s3.credentials.secretAccessKey);
    // And nothing was written with it; a route answers that failure 503 with Retry-After, naming neither bucket nor endpoint.
    const written = await rejection(store.write(chunked(randomBytes(100)), 'files', 'nope.bin', MIB));
    expect(written).toBeInstanceOf(BlobStoreError);
    const answered = toServiceError(written);
    expect(answered.statusCode).toBe(503);
    expect(answered.headers['Retry-After']).toBe('30');
    expect(answered.message).toMatch(/^the service's blob store failed \(S3 403 SignatureDoesNotMatch\): retry later/);
    expect(answered.message).not.toContain(s3.bucket);
    expect(answered.message).not.toContain('127.0.0.1');
    await expectNothingUnder('wrong-secret');
  });

  it('takes its credentials, region and endpoint from the SDK settings (AWS_ENDPOINT_URL_S3) when the URL has none', async () => {
    const names = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION', 'AWS_ENDPOINT_URL_S3', 'AWS_REQUEST_CHECKSUM_CALCULATION', 'AWS_RESPONSE_CHECKSUM_VALIDATION'] as const;
    const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
    try {
      Object.assign(process.env, {
        AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
        AWS_REGION: s3.region, AWS_ENDPOINT_URL_S3: s3.endpoint,
      });
      // The adapter sets the checksum settings Swift needs itself, not through the environment.
      delete process.env.AWS_REQUEST_CHECKSUM_CALCULATION;
      delete process.env.AWS_RESPONSE_CHECKSUM_VALIDATION;
      const store = await openS3Blobs(`s3://${s3.bucket}/${s3.prefix}/from-env?path-style=true`);
      stores.push(store);
      expect(store.where).toBe(`s3://${s3.bucket}/${s3.prefix}/from-env at ${s3.endpoint}`);
      const bytes = randomBytes(6 * MIB);
      const w = await store.write(chunked(bytes), 'files', 'env.bin', 64 * MIB);
      expect(sha256(await getObject(`${s3.prefix}/from-env/${w.key}`))).toBe(sha256(bytes));

      // No region anywhere: a clear error when the store is opened.
      delete process.env.AWS_REGION;
      const e = await rejection(openS3Blobs(`s3://${s3.bucket}/x?path-style=true`));
      expect(isForgeError(e, BlobStoreError) && e.kind).toBe('config');
      expect((e as Error).message).toMatch(/no region .*AWS_REGION/);
    } finally {
      for (const n of names) {
        if (saved[n] === undefined) delete process.env[n];
        else process.env[n] = saved[n];
      }
    }
  });
});
