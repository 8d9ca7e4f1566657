// Publishing to the real loopback Keystone + Glance: the happy paths, URL forms, checksums, delete.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isForgeError } from '../../src/errors';
import { deleteGlanceImage, getGlanceImage, OpenStackError, publishToGlance, type PublishProgress } from '../../src/openstack';
import { imagesNamed, openStackServices, type OpenStackEnv } from '../support/openstack';

const svc = openStackServices();
if (svc.skip) console.warn(`[openstack tests skipped] ${svc.skip}`);

describe.skipIf(!svc.env)('publishToGlance against the real Keystone and Glance', () => {
  const env = svc.env as OpenStackEnv;
  const user = () => ({ keystoneUrl: env.keystoneUrl, login: env.user.login, password: env.user.password, domain: env.domain, project: env.user.project });
  let dir: string;
  let raw: { file: string; size: number; sha256: string; md5: string };
  let qcow2: { file: string; size: number };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'af-openstack-'));
    const data = randomBytes(3 * 1024 * 1024 + 17); // not a multiple of the chunk size
    raw = { file: join(dir, 'disk.raw'), size: data.length, sha256: hash('sha256', data), md5: hash('md5', data) };
    writeFileSync(raw.file, data);
    const q = join(dir, 'disk.qcow2');
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', q, '64M']);
    qcow2 = { file: q, size: statSync(q).size };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('publishes a qcow2 as the non-admin user: active, checksums match, then delete leaves nothing', async () => {
    const name = `af-it-${randomUUID()}`;
    const progress: PublishProgress[] = [];
    const t0 = Date.now();
    const { imageId, md5 } = await publishToGlance({
      ...user(), displayName: name, publicImage: false, diskFormat: 'qcow2', file: qcow2.file, size: qcow2.size,
      onProgress: (p) => progress.push(p),
    });
    console.log(`qcow2 ${qcow2.size} bytes published in ${Date.now() - t0} ms`);
    const img = await getGlanceImage({ ...user(), imageId });
    expect(img).toMatchObject({ id: imageId, name, status: 'active', size: qcow2.size, visibility: 'private', diskFormat: 'qcow2' });
    expect(img?.checksum).toBe(md5);
    expect(img?.checksum).toBe(hash('md5', readFileSync(qcow2.file)));
    expect(img?.osHashValue).toBe(hash('sha512', readFileSync(qcow2.file)));
    // Progress: starts at 0, never goes back, ends at the total.
    expect(progress[0]).toMatchObject({ bytesLoaded: 0, bytesTotal: qcow2.size });
    expect(progress.at(-1)).toMatchObject({ bytesLoaded: qcow2.size, bytesTotal: qcow2.size, message: 'published' });
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.bytesLoaded).toBeGreaterThanOrEqual(progress[i - 1]!.bytesLoaded);

    expect(await imagesNamed(env, name)).toEqual([[imageId, 'active']]); // the checker sees the user's images
    expect(await deleteGlanceImage({ ...user(), imageId })).toEqual({ deleted: true });
    expect(await getGlanceImage({ ...user(), imageId })).toBeUndefined();
    expect(await deleteGlanceImage({ ...user(), imageId })).toEqual({ deleted: false }); // 404 tolerated
    expect(await imagesNamed(env, name)).toEqual([]);
  });

  it('a VMDK is published as streamOptimized (vmware_disktype), as qemu-img wrote it; other formats carry no such property', async () => {
    const vmdk = join(dir, 'disk.vmdk');
    execFileSync('qemu-img', ['convert', '-q', '-O', 'vmdk', '-o', 'subformat=streamOptimized', raw.file, vmdk]);
    const name = `af-it-${randomUUID()}`;
    const { imageId } = await publishToGlance({ ...user(), displayName: name, publicImage: false, diskFormat: 'vmdk', file: vmdk, size: statSync(vmdk).size });
    expect(await getGlanceImage({ ...user(), imageId })).toMatchObject({ status: 'active', diskFormat: 'vmdk', vmwareDiskType: 'streamOptimized' });
    await deleteGlanceImage({ ...user(), imageId });
    const q = await publishToGlance({ ...user(), displayName: `${name}-q`, publicImage: false, diskFormat: 'qcow2', file: qcow2.file, size: qcow2.size });
    expect(await getGlanceImage({ ...user(), imageId: q.imageId })).toMatchObject({ diskFormat: 'qcow2', vmwareDiskType: null });
    await deleteGlanceImage({ ...user(), imageId: q.imageId });
  });

  it.each([
    ['keystone without /v3, glance from the catalog', (u: string) => u.replace(/\/v3$/, ''), undefined],
    ['keystone with /v3/, glance with /v2', (u: string) => `${u}/`, (g: string) => `${g}/v2`],
    ['keystone /v3, glance without version and a trailing slash', (u: string) => u, (g: string) => `${g}/`],
  ])('accepts URL forms: %s; raw data with a matching sha256', async (_label, ks, gl) => {
    const name = `af-it-${randomUUID()}`;
    const { imageId, md5 } = await publishToGlance({
      ...user(), keystoneUrl: ks(env.keystoneUrl), glanceUrl: gl?.(env.glanceUrl),
      displayName: name, publicImage: false, diskFormat: 'raw', file: raw.file, size: raw.size, sha256: raw.sha256,
    });
    expect(md5).toBe(raw.md5);
    expect(await getGlanceImage({ ...user(), imageId })).toMatchObject({ status: 'active', size: raw.size, checksum: raw.md5 });
    await deleteGlanceImage({ ...user(), imageId });
  });

  it('a file that differs from its recorded sha256 → kind checksum, and the image is deleted', async () => {
    const name = `af-it-${randomUUID()}`;
    const err = await publishToGlance({
      ...user(), displayName: name, publicImage: false, diskFormat: 'raw', file: raw.file, size: raw.size,
      sha256: 'ab'.repeat(32),
    }).catch((e: unknown) => e);
    expect(isForgeError(err, OpenStackError)).toBe(true);
    expect(err).toMatchObject({ kind: 'checksum', orphanImageId: undefined });
    expect((err as Error).message).toMatch(/SHA-256/);
    expect(await imagesNamed(env, name)).toEqual([]);
  });

  it('the admin can publish a public image', async () => {
    const name = `af-it-${randomUUID()}`;
    const admin = { keystoneUrl: env.keystoneUrl, login: env.admin.login, password: env.admin.password, domain: env.domain, project: env.admin.project };
    const { imageId } = await publishToGlance({
      ...admin, displayName: name, publicImage: true, diskFormat: 'raw', file: raw.file, size: raw.size,
    });
    // Public: the non-admin user of another project sees it too.
    expect(await getGlanceImage({ ...user(), imageId })).toMatchObject({ status: 'active', visibility: 'public' });
    await deleteGlanceImage({ ...admin, imageId });
    expect(await imagesNamed(env, name)).toEqual([]);
  });
});

function hash(algo: string, data: Buffer): string {
  return createHash(algo).update(data).digest('hex');
}
