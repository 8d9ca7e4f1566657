// Faults during the upload: the caller aborts, the connection drops, Glance stops reading. In each
// case the half-created image is deleted and the error says what happened.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError, isForgeError } from '../../src/errors';
import { publishToGlance, OpenStackError, type PublishRequest } from '../../src/server/openstack';
import { startFaultProxy } from './fault-proxy';
import { imagesNamed, openStackServices, randomFile, type OpenStackEnv } from '../support/openstack';

const svc = openStackServices();
if (svc.skip) console.warn(`[openstack tests skipped] ${svc.skip}`);

const MiB = 1024 * 1024;

describe.skipIf(!svc.env)('faults during the upload to the real Glance', () => {
  const env = svc.env as OpenStackEnv;
  let dir: string;
  let file: string;
  const size = 48 * MiB;
  const request = (over: Partial<PublishRequest> = {}): PublishRequest => ({
    keystoneUrl: env.keystoneUrl, login: env.user.login, password: env.user.password, domain: env.domain,
    project: env.user.project, displayName: `af-it-${randomUUID()}`, publicImage: false, diskFormat: 'raw', file, size,
    ...over,
  });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'af-openstack-'));
    file = join(dir, 'disk.raw');
    randomFile(file, size);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('abort mid-upload → AbortedError, the image is deleted', async () => {
    const ac = new AbortController();
    let abortedAt = 0;
    const req = request({
      signal: ac.signal,
      onProgress: (p) => {
        if (p.message === 'uploading to Glance' && p.bytesLoaded > 0 && !ac.signal.aborted) {
          abortedAt = p.bytesLoaded;
          ac.abort();
        }
      },
    });
    const e = await publishToGlance(req).catch((x: unknown) => x);
    expect(isForgeError(e, AbortedError), String(e)).toBe(true);
    expect(abortedAt).toBeGreaterThan(0);
    expect(abortedAt).toBeLessThan(size);
    expect(await imagesNamed(env, req.displayName)).toEqual([]);
  });

  it('a signal aborted before the call → AbortedError, nothing created', async () => {
    const req = request({ signal: AbortSignal.abort() });
    const e = await publishToGlance(req).catch((x: unknown) => x);
    expect(isForgeError(e, AbortedError)).toBe(true);
    expect(await imagesNamed(env, req.displayName)).toEqual([]);
  });

  it('abort while the image is being created → AbortedError, the image is still deleted', async () => {
    const ac = new AbortController();
    const req = request({
      signal: ac.signal,
      onProgress: (p) => {
        if (p.message === 'creating the Glance image') ac.abort();
      },
    });
    const e = await publishToGlance(req).catch((x: unknown) => x);
    expect(isForgeError(e, AbortedError)).toBe(true);
    expect(await imagesNamed(env, req.displayName)).toEqual([]);
  });

  it('a proxy that drops the connection mid-upload → kind network naming Glance, no image left', async () => {
    const proxy = await startFaultProxy(env.glanceUrl, { dropAfterBytes: 8 * MiB });
    try {
      const req = request({ glanceUrl: proxy.url });
      const t0 = Date.now();
      const e = (await publishToGlance(req).catch((x: unknown) => x)) as OpenStackError;
      expect(isForgeError(e, OpenStackError), String(e)).toBe(true);
      expect(e).toMatchObject({ kind: 'network', service: 'glance', orphanImageId: undefined });
      expect(e.message).toMatch(/^upload data of image [0-9a-f-]+: connection to Glance at http:\/\/127\.0\.0\.1:\d+\/v2\/images\/.*\/file failed/);
      expect(e.imageId).toMatch(/^[0-9a-f-]{36}$/);
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(await imagesNamed(env, req.displayName)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('data corrupted in flight → kind checksum (Glance MD5 differs from the streamed one), no image left', async () => {
    const proxy = await startFaultProxy(env.glanceUrl, { corruptAtByte: 4 * MiB });
    try {
      const req = request({ glanceUrl: proxy.url });
      const e = (await publishToGlance(req).catch((x: unknown) => x)) as OpenStackError;
      expect(isForgeError(e, OpenStackError), String(e)).toBe(true);
      expect(e).toMatchObject({ kind: 'checksum', orphanImageId: undefined });
      expect(e.message).toMatch(/Glance checksum \(MD5\) [0-9a-f]{32} differs from the sent data's [0-9a-f]{32}/);
      expect(await imagesNamed(env, req.displayName)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('Glance stops reading mid-upload → kind timeout after the idle bound, no image left', async () => {
    const proxy = await startFaultProxy(env.glanceUrl, { stallAfterBytes: 8 * MiB });
    try {
      const req = request({ glanceUrl: proxy.url, timeouts: { uploadIdleTimeoutMs: 1_000, requestTimeoutMs: 5_000 } });
      const t0 = Date.now();
      const e = (await publishToGlance(req).catch((x: unknown) => x)) as OpenStackError;
      const took = Date.now() - t0;
      expect(isForgeError(e, OpenStackError), String(e)).toBe(true);
      expect(e).toMatchObject({ kind: 'timeout', service: 'glance', orphanImageId: undefined });
      expect(e.message).toMatch(/did not answer in time/);
      expect(took).toBeGreaterThanOrEqual(900);
      expect(took).toBeLessThan(10_000);
      expect(await imagesNamed(env, req.displayName)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
