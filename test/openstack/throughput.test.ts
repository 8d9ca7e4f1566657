// Long test (APPLIANCE_FORGE_LONG=1): upload throughput of a 256 MiB image to the real Glance against a
// plain local streamed copy of the same file, and proof that memory stays flat while streaming.
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteGlanceImage, getGlanceImage, publishToGlance } from '../../src/openstack';
import { openStackServices, randomFile, type OpenStackEnv } from '../support/openstack';

const svc = openStackServices();
const long = process.env.APPLIANCE_FORGE_LONG === '1';
if (svc.skip) console.warn(`[openstack tests skipped] ${svc.skip}`);
else if (!long) console.warn('[openstack throughput skipped] set APPLIANCE_FORGE_LONG=1');

const MiB = 1024 * 1024;
const SIZE = Number(process.env.OPENSTACK_BENCH_MIB ?? 256) * MiB;

describe.skipIf(!svc.env || !long)('upload throughput to the real Glance', () => {
  const env = svc.env as OpenStackEnv;
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'af-openstack-'));
    file = join(dir, 'big.raw');
    randomFile(file, SIZE);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`publishes ${SIZE / MiB} MiB with flat memory; figures vs a local copy`, async () => {
    const mibps = (ms: number) => ((SIZE / MiB) / (ms / 1000)).toFixed(0);
    let t = Date.now();
    await pipeline(createReadStream(file, { highWaterMark: MiB }), createWriteStream(join(dir, 'copy.raw')));
    const copyMs = Date.now() - t;
    rmSync(join(dir, 'copy.raw'));
    t = Date.now();
    const md5 = createHash('md5');
    const sha512 = createHash('sha512');
    for await (const c of createReadStream(file, { highWaterMark: MiB }) as AsyncIterable<Buffer>) {
      md5.update(c);
      sha512.update(c);
    }
    const hashMs = Date.now() - t;

    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    t = Date.now();
    const user = { keystoneUrl: env.keystoneUrl, login: env.user.login, password: env.user.password, domain: env.domain, project: env.user.project };
    let reports = 0;
    const { imageId } = await publishToGlance({
      ...user, displayName: `af-bench-${randomUUID()}`, publicImage: false, diskFormat: 'raw', file, size: SIZE,
      onProgress: () => reports++,
    }).finally(() => clearInterval(sampler));
    const publishMs = Date.now() - t;
    try {
      expect(await getGlanceImage({ ...user, imageId })).toMatchObject({ status: 'active', size: SIZE, checksum: md5.digest('hex') });
    } finally {
      await deleteGlanceImage({ ...user, imageId });
    }
    const growth = (peak - rss0) / MiB;
    console.log(
      `${SIZE / MiB} MiB: local streamed copy ${copyMs} ms (${mibps(copyMs)} MiB/s), md5+sha512 alone ${hashMs} ms ` +
      `(${mibps(hashMs)} MiB/s), publish ${publishMs} ms (${mibps(publishMs)} MiB/s incl. auth, create, verify); ` +
      `RSS growth during publish ${growth.toFixed(1)} MiB; ${reports} progress reports`,
    );
    expect(growth).toBeLessThan(64); // streamed: a few chunks in flight, never the file
  });
});
