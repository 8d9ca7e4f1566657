// Generation with the real image builder (wire contract §8): 201 with status and uri, live status,
// 409 while running, cancel, finished record with size and checksums, streamed download; and the
// publication rules that need no cloud (400 for a format without credAccountType).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/client';
import { startTestServer, tempDir, validatesAgainstXsd, type TestServer } from './helpers';

async function applianceWithProfile(c: Client, name: string): Promise<number> {
  const app = await c.appliance_create({ uid: 'alice', body: { name, version: '1', distributionUri: 'distributions/1', installProfile: { diskSize: 1024, memorySize: 512 } } });
  const minimal = (await c.osTemplate_getAll({ id: 1 })).distribProfiles!.find((p) => p.name === 'Minimal')!;
  await c.applianceOSProfile_create({ uid: 'alice', aid: app.dbId!, body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: minimal.uri! } });
  return app.dbId!;
}

describe('generation jobs', () => {
  let t: TestServer;
  let c: Client;
  beforeAll(async () => {
    t = await startTestServer();
    c = t.client(t.alice);
  });
  afterAll(async () => t.close());

  it('generates an image with the uploaded software, then serves it', async () => {
    const aid = await applianceWithProfile(c, 'gen');
    const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'app', version: '1' } });
    const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { kind: 'SoftwareFile', name: 'run.sh', installLocation: '/opt/app', rights: '0755' } });
    const f = join(tempDir(), 'run.sh');
    writeFileSync(f, '#!/bin/sh\necho hi\n');
    await c.upload({ msid: sw.dbId!, said: art.dbId!, fileName: 'run.sh' }, { file: f });
    await c.appliance_update({ uid: 'alice', aid, body: { mySoftwareList: [{ uri: sw.uri! }] } });

    const created = await c.send('machineImage_generate', { uid: 'alice', aid, body: { targetFormat: { name: 'QCOW2' }, compress: false, installProfile: { diskSize: 1024 } } });
    expect(created.status).toBe(201);
    const image = created.value as { uri: string; status: { complete?: boolean }; dbId: number };
    expect(image.uri).toMatch(/images\/\d+$/);
    expect(image.status).toBeTruthy();
    const dup = await t.raw('POST', `users/alice/appliances/${aid}/images`, { headers: { 'content-type': 'application/xml' }, body: '<image><targetFormat><name>QCOW2</name></targetFormat><installProfile><diskSize>1024</diskSize></installProfile></image>' });
    expect([201, 409]).toContain(dup.status); // 409 unless the first one already finished
    const final = await c.waitForJob(image, { timeoutMs: 900_000, pollMs: 100 });
    expect(final.complete).toBe(true);
    expect(final.percentage).toBe(100);
    await t.server.jobs.idle();

    const done = await c.machineImage_get({ uid: 'alice', aid, itid: image.dbId });
    expect(done.fileSize).toBeGreaterThan(0);
    expect(done.size).toBe(done.fileSize);
    expect(done.sha256sum).toMatch(/^[0-9a-f]{64}$/);
    expect(done.md5sum).toMatch(/^[0-9a-f]{32}$/);
    expect(done.fileName).toBe('gen-1.qcow2');
    expect(done.downloadUri).toBe(`users/alice/appliances/${aid}/images/${image.dbId}/downloads/gen-1.qcow2`);
    const raw = await t.raw('GET', `users/alice/appliances/${aid}/images/${image.dbId}`);
    validatesAgainstXsd(raw.text);

    const out = join(tempDir(), 'img.qcow2');
    const d = await c.download(done.downloadUri!, { to: out });
    expect(d.size).toBe(done.fileSize);
    expect(createHash('sha256').update(readFileSync(out)).digest('hex')).toBe(done.sha256sum);

    const statuses = await c.machineImageStatus_getAll({ uid: 'alice', aid });
    expect(statuses.total).toBeGreaterThanOrEqual(1);
  }, 900_000);

  it('cancels a running generation; 400 for publication of a format without a cloud', async () => {
    const aid = await applianceWithProfile(c, 'cancel');
    const image = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'Raw Virtual Disk' }, installProfile: { diskSize: 1024 } } });
    const st = await c.machineImageGeneration_cancel({ uid: 'alice', aid, itid: image.dbId! });
    expect(st.cancelled || st.complete).toBe(true);
    await t.server.jobs.idle();
    const after = await c.machineImageStatus_get({ uid: 'alice', aid, itid: image.dbId! });
    expect(after.cancelled || after.complete).toBe(true);
    if (after.cancelled) {
      expect((await t.raw('GET', `users/alice/appliances/${aid}/images/${image.dbId}/downloads`)).status).toBe(404);
    }
    const gen = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'Raw Virtual Disk' }, installProfile: { diskSize: 1024 } } });
    await c.waitForJob(gen, { timeoutMs: 900_000, pollMs: 100 });
    const pub = await t.raw('POST', `users/alice/appliances/${aid}/images/${gen.dbId}/pimages`, {
      headers: { 'content-type': 'application/xml' },
      body: '<ns0:publishImage xmlns:ns0="http://www.usharesoft.com/uforge" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="ns0:PublishImageOpenStack"><credAccount xsi:type="ns0:CredAccountOpenStack"><keystoneUrl>http://127.0.0.1:1/v3</keystoneUrl><login>x</login><password>y</password></credAccount><keystoneProject>p</keystoneProject></ns0:publishImage>',
    });
    expect(pub.status).toBe(400);
    expect(pub.text).not.toContain('<password>');
  }, 900_000);

  it('400 for an unknown format or an appliance without OS profile', async () => {
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'bare', version: '1', distributionUri: 'distributions/1' } });
    await expect(c.machineImage_generate({ uid: 'alice', aid: app.dbId!, body: { targetFormat: { name: 'QCOW2' } } })).rejects.toMatchObject({ status: 400 });
    const aid = await applianceWithProfile(c, 'fmt');
    await expect(c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'Floppy' } } })).rejects.toMatchObject({ status: 400 });
  });
});
