// Large uploads: hashed in worker threads beside the writes, a few MiB in memory whatever
// the size. Checksums are checked against openssl (an independent implementation), memory by the
// process's RSS while 256 MiB go through (client and server both live in this process), and an
// upload that passes the limit half-way (no Content-Length) is a 413 that keeps nothing, as does one
// whose client cuts it off. From
// LATE_DIGESTS_FROM bytes (or of unknown length) the answer comes before the sha256 and the md5, which
// follow on the record: a GET of the record, of its list or of the file waits for them, a replaced
// file never gets the old one's, the first read after a restart fills in what a stop left missing.
import { execFileSync } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTarget } from '../../src/auth/signer';
import { decodeXml } from '../../src/codec';
import { LATE_DIGESTS_FROM, PARALLEL_DIGEST_FROM } from '../../src/server/blobs/local';
import { systemClock } from '../../src/server/ports';
import { SqliteStore as Store } from '../../src/server/store/sqlite/store';
import { onFarm } from '../support/farm';
import { startTestServer, tempDir, type TestServer } from './helpers';

const MIB = 1024 * 1024;

function randomFile(dir: string, bytes: number): string {
  const file = join(dir, `payload-${bytes}.bin`);
  const fd = openSync(file, 'w');
  const buf = Buffer.alloc(4 * MIB);
  for (let left = bytes; left > 0; left -= buf.length) writeSync(fd, randomFillSync(buf), 0, Math.min(left, buf.length));
  closeSync(fd);
  return file;
}

const openssl = (algorithm: string, file: string): string => /= ([0-9a-f]+)\s*$/.exec(execFileSync('openssl', ['dgst', `-${algorithm}`, file], { encoding: 'utf8' }))![1]!;

describe('large uploads', () => {
  let t: TestServer;
  const dir = tempDir('forge-upload-');
  beforeAll(async () => {
    t = await startTestServer({ limits: { uploadBytes: 512 * MIB } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function artifact(name: string): Promise<{ msid: number; said: number }> {
    const c = t.client(t.alice);
    const sw = await c.mySoftware_create({ uid: 'alice', body: { name, version: '1' } });
    const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { name: `${name}.bin` } });
    return { msid: sw.dbId!, said: art.dbId! };
  }

  it('stores sizes around the slot and worker thresholds with the checksums openssl computes', async () => {
    const c = t.client(t.alice);
    for (const bytes of [PARALLEL_DIGEST_FROM - 1, PARALLEL_DIGEST_FROM, PARALLEL_DIGEST_FROM + MIB + 17, 3 * MIB]) {
      const file = randomFile(dir, bytes);
      const { msid, said } = await artifact(`sizes-${bytes}`);
      const done = await c.upload({ uid: 'alice', msid, said, fileName: 'payload.bin' }, { file });
      expect(done.size, `${bytes}`).toBe(bytes);
      expect(done.sha256sum).toBe(openssl('sha256', file));
      expect(done.md5sum).toBe(openssl('md5', file));
    }
  });

  it('keeps the process RSS within 100 MiB of its start while 256 MiB are uploaded', async () => {
    const file = randomFile(dir, 256 * MIB);
    const { msid, said } = await artifact('big');
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      const c = t.client(t.alice);
      const done = await c.upload({ uid: 'alice', msid, said, fileName: 'big.bin' }, { file });
      expect(done.size).toBe(256 * MIB);
      // The GET waits for both checksums, read back from the file in two hash workers: in the window too.
      const got = await c.mySoftwareArtifact_get({ uid: 'alice', msid, said });
      expect([got.sha256sum, got.md5sum]).toEqual([openssl('sha256', file), openssl('md5', file)]);
    } finally {
      clearInterval(sampler);
    }
    expect((peak - rss0) / MIB).toBeLessThanOrEqual(100);
  });

  /** The file's bytes as the download route serves them: its ETag and the sha256 of its body. */
  async function download(binaryUri: string): Promise<{ etag: string | undefined; sha256: string }> {
    const r = await request(`${t.server.url}/${signTarget(binaryUri, t.alice)}`);
    expect(r.statusCode).toBe(200);
    const h = createHash('sha256');
    for await (const chunk of r.body) h.update(chunk as Buffer);
    return { etag: r.headers.etag as string | undefined, sha256: h.digest('hex') };
  }

  it('answers a file of LATE_DIGESTS_FROM bytes or more before its checksums; a GET of it, of its list or of its file waits for them', async () => {
    const c = t.client(t.alice);
    for (const bytes of [LATE_DIGESTS_FROM - 1, LATE_DIGESTS_FROM]) {
      const file = randomFile(dir, bytes);
      const sums = { sha256sum: openssl('sha256', file), md5sum: openssl('md5', file) };
      const { msid, said } = await artifact(`late-${bytes}`);
      const done = await c.upload({ uid: 'alice', msid, said, fileName: 'payload.bin' }, { file });
      expect(done.size).toBe(bytes);
      // The data folder leaves them for later from LATE_DIGESTS_FROM; S3 computes them while the bytes stream.
      const late = bytes >= LATE_DIGESTS_FROM && t.farm === undefined;
      expect([done.sha256sum, done.md5sum], `${bytes}`).toEqual(late ? [undefined, undefined] : [sums.sha256sum, sums.md5sum]);
      // First the file, at once: its ETag is the sha256, so its answer waits for it.
      expect(await download(done.binaryUri!)).toEqual({ etag: `"${sums.sha256sum}"`, sha256: sums.sha256sum });
      const listed = await c.mySoftwareArtifact_getAll({ uid: 'alice', msid });
      expect(listed.softwareArtifacts?.map((a) => [a.sha256sum, a.md5sum])).toEqual([[sums.sha256sum, sums.md5sum]]);
      expect(await c.mySoftwareArtifact_get({ uid: 'alice', msid, said })).toMatchObject(sums);
    }
  });

  it('leaves the checksums of an upload of unknown length (chunked) for after the answer', async () => {
    const { msid, said } = await artifact('chunked');
    const bytes = Buffer.concat(Array.from({ length: 6 }, () => randomFillSync(Buffer.alloc(MIB))));
    const r = await request(`${t.server.url}/${signTarget(`users/alice/mysoftware/${msid}/artifacts/${said}/bin/chunked.bin`, t.alice)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Readable.from([bytes.subarray(0, 3 * MIB), bytes.subarray(3 * MIB)]),
    });
    expect(r.statusCode).toBe(200);
    const answered = decodeXml(await r.body.text(), 'softwareArtifact').value;
    expect(answered).toMatchObject({ size: 6 * MIB, uploaded: true });
    const sums = [createHash('sha256').update(bytes).digest('hex'), createHash('md5').update(bytes).digest('hex')];
    expect([answered.sha256sum, answered.md5sum]).toEqual(t.farm === undefined ? [undefined, undefined] : sums);
    const got = await t.client(t.alice).mySoftwareArtifact_get({ uid: 'alice', msid, said });
    expect(got).toMatchObject({ sha256sum: createHash('sha256').update(bytes).digest('hex'), md5sum: createHash('md5').update(bytes).digest('hex') });
  });

  it('gives a file replaced while its checksums were pending the checksums of the new file', async () => {
    const c = t.client(t.alice);
    const [first, second] = [randomFile(dir, LATE_DIGESTS_FROM + 1), randomFile(dir, LATE_DIGESTS_FROM + 2)];
    const { msid, said } = await artifact('replaced');
    await c.upload({ uid: 'alice', msid, said, fileName: 'payload.bin' }, { file: first });
    const done = await c.upload({ uid: 'alice', msid, said, fileName: 'payload.bin' }, { file: second });
    expect(done.size).toBe(LATE_DIGESTS_FROM + 2);
    const got = await c.mySoftwareArtifact_get({ uid: 'alice', msid, said });
    expect(got).toMatchObject({ size: LATE_DIGESTS_FROM + 2, sha256sum: openssl('sha256', second), md5sum: openssl('md5', second) });
  });

  // The data folder's late digests alone: a farm's S3 writes compute both before their answer.
  it.skipIf(onFarm())('fills in after a restart the checksums that a stop left missing', async () => {
    const own = await startTestServer();
    try {
      const c = own.client(own.alice);
      const file = randomFile(dir, LATE_DIGESTS_FROM);
      const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'restart', version: '1' } });
      const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { name: 'restart.bin' } });
      // A second one that loses only its md5 (a record of the release before, whose answer kept the sha256).
      const md5Only = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { name: 'md5-only.bin' } });
      await c.upload({ uid: 'alice', msid: sw.dbId!, said: art.dbId!, fileName: 'payload.bin' }, { file });
      await c.upload({ uid: 'alice', msid: sw.dbId!, said: md5Only.dbId!, fileName: 'payload.bin' }, { file });
      await own.server.jobs.idle();
      // What a server killed between the answer and the checksums' commit leaves (a kill cannot be timed
      // into that window reliably): the record without them, written through the store while the server runs.
      const store = new Store(own.dataDir, systemClock);
      try {
        const row = (await store.get('artifact', art.dbId!))!;
        expect([row.doc.file?.sha256, row.doc.file?.md5]).toEqual([openssl('sha256', file), openssl('md5', file)]);
        await store.update('artifact', row.id, { ...row.doc, file: { ...row.doc.file!, sha256: undefined, md5: undefined } });
        const other = (await store.get('artifact', md5Only.dbId!))!;
        await store.update('artifact', other.id, { ...other.doc, file: { ...other.doc.file!, md5: undefined } });
      } finally {
        await store.close();
      }
      await own.restart();
      const got = await own.client(own.alice).mySoftwareArtifact_get({ uid: 'alice', msid: sw.dbId!, said: art.dbId! });
      expect(got).toMatchObject({ sha256sum: openssl('sha256', file), md5sum: openssl('md5', file) });
      const gotMd5 = await own.client(own.alice).mySoftwareArtifact_get({ uid: 'alice', msid: sw.dbId!, said: md5Only.dbId! });
      expect(gotMd5).toMatchObject({ sha256sum: openssl('sha256', file), md5sum: openssl('md5', file) });
    } finally {
      await own.close();
    }
  });

  it('an upload of LATE_DIGESTS_FROM bytes that its client cuts off half-way keeps nothing, and the server goes on', async () => {
    const own = await startTestServer();
    try {
      const c = own.client(own.alice);
      const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'cut', version: '1' } });
      const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { name: 'cut.bin' } });
      const where = { uid: 'alice', msid: sw.dbId!, said: art.dbId! };
      // The declared length says 2 × LATE_DIGESTS_FROM; 16 MiB are sent, then the socket is destroyed.
      const req = httpRequest(`${own.server.url}/${signTarget(`users/alice/mysoftware/${sw.dbId}/artifacts/${art.dbId}/bin/cut.bin`, own.alice)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(2 * LATE_DIGESTS_FROM) },
      });
      req.on('error', () => undefined); // the cut is ours
      for (let i = 0; i < 16; i++) if (!req.write(Buffer.alloc(MIB, i))) await once(req, 'drain');
      // The server has the write under way: its temporary file (a multipart upload in S3) holds bytes.
      for (let n = 0; n < 200 && !(await own.stored.writing()); n++) await delay(25);
      expect(await own.stored.writing()).toBe(true);
      req.destroy();
      for (let n = 0; n < 200 && (await own.stored.blobKeys()).length > 0; n++) await delay(25);
      expect(await own.stored.blobKeys()).toEqual([]);
      expect((await c.mySoftwareArtifact_get(where)).uploaded).toBe(false);
      // The same artifact then takes a whole file.
      const file = randomFile(dir, LATE_DIGESTS_FROM);
      const done = await c.upload({ ...where, fileName: 'cut.bin' }, { file });
      expect(done.size).toBe(LATE_DIGESTS_FROM);
      expect(await c.mySoftwareArtifact_get(where)).toMatchObject({ uploaded: true, sha256sum: openssl('sha256', file), md5sum: openssl('md5', file) });
    } finally {
      await own.close();
    }
  });

  it('a chunked upload that passes the limit half-way is a 413 and keeps nothing', async () => {
    const small = await startTestServer({ limits: { uploadBytes: 6 * MIB } });
    try {
      const c = small.client(small.alice);
      const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'over', version: '1' } });
      const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { name: 'over.bin' } });
      async function* chunks(): AsyncGenerator<Buffer> {
        for (let i = 0; i < 10; i++) yield Buffer.alloc(MIB, i);
      }
      // No Content-Length: the server learns the size only as the bytes come (the write without digests).
      const r = await request(`${small.server.url}/${signTarget(`users/alice/mysoftware/${sw.dbId}/artifacts/${art.dbId}/bin/over.bin`, small.alice)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Readable.from(chunks()),
      }).catch((e: Error) => e);
      if (!(r instanceof Error)) {
        expect(r.statusCode).toBe(413);
        expect(await r.body.text()).toContain('uforgeError');
      }
      const a = await small.raw('GET', `users/alice/mysoftware/${sw.dbId}/artifacts/${art.dbId}`);
      expect(decodeXml(a.text, 'softwareArtifact').value.uploaded).toBe(false);
      expect(await small.stored.blobKeys()).toEqual([]);
    } finally {
      await small.close();
    }
  });
});
