// Publication to the real loopback Keystone + Glance (../shared/openstack): 201, background job,
// cloudId and published=true, errors in errorMessage without secrets, DELETE removes the Glance image.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/client';
import { imagesNamed, openStackServices } from '../support/openstack';
import { startTestServer, validatesAgainstXsd, type TestServer } from './helpers';

const svc = openStackServices();
if (svc.skip) console.warn(`[server publication tests skipped] ${svc.skip}`);

describe.skipIf(!svc.env)('publication to Glance', () => {
  const env = svc.env!;
  let t: TestServer;
  let c: Client;
  let aid: number;
  let itid: number;
  beforeAll(async () => {
    t = await startTestServer();
    c = t.client(t.alice);
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'pub', version: '1', distributionUri: 'distributions/1' } });
    aid = app.dbId!;
    const minimal = (await c.osTemplate_getAll({ id: 1 })).distribProfiles!.find((p) => p.name === 'Minimal')!;
    await c.applianceOSProfile_create({ uid: 'alice', aid, body: { kind: 'LinuxProfile', standardProfileUri: minimal.uri! } });
    const image = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'OpenStack QCOW2' }, installProfile: { diskSize: 1024 } } });
    await c.waitForJob(image, { timeoutMs: 900_000, pollMs: 100 });
    itid = image.dbId!;
  }, 900_000);
  afterAll(async () => t?.close());

  it('publishes with a stored account, then DELETE removes the Glance image', async () => {
    const account = await c.cloudAccount_create({
      uid: 'alice',
      body: { kind: 'CredAccountOpenStack', name: 'loopback', targetPlatform: { name: 'OpenStack', type: 'openstack' }, keystoneUrl: env.keystoneUrl, glanceUrl: env.glanceUrl, login: env.user.login, password: env.user.password, keystoneVersion: 'v3' },
    });
    const name = `forge-server-${Date.now()}`;
    const sent = await c.send('machineImage_publish', {
      uid: 'alice',
      aid,
      body: { kind: 'PublishImageOpenStack', imageUri: `users/alice/appliances/${aid}/images/${itid}`, credAccount: { kind: 'CredAccountOpenStack', uri: account.uri! }, keystoneDomain: env.domain, keystoneProject: env.user.project, displayName: name, publicImage: false },
    });
    expect(sent.status).toBe(201);
    const pub = sent.value as { uri: string; dbId: number };
    const final = await c.waitForJob(pub, { timeoutMs: 900_000, pollMs: 200 });
    expect(final.published).toBe(true);
    const rec = await c.machineImagePublished_get({ uid: 'alice', aid, itid, pitid: pub.dbId });
    expect(rec.cloudId).toBeTruthy();
    const raw = await t.raw('GET', `users/alice/appliances/${aid}/images/${itid}/pimages/${pub.dbId}`);
    expect(raw.text).not.toContain(env.user.password);
    validatesAgainstXsd(raw.text);
    expect(await imagesNamed(env, name)).toEqual([[rec.cloudId, 'active']]);

    await c.machineImagePublished_delete({ uid: 'alice', aid, itid, pitid: pub.dbId });
    expect(await imagesNamed(env, name)).toEqual([]);
    expect((await t.raw('GET', `users/alice/appliances/${aid}/images/${itid}/pimages/${pub.dbId}`)).status).toBe(404);
  }, 900_000);

  it('a wrong password ends in error with a message and no secret', async () => {
    const pub = await c.applianceImage_publish({
      uid: 'alice',
      aid,
      itid,
      body: { kind: 'PublishImageOpenStack', credAccount: { kind: 'CredAccountOpenStack', keystoneUrl: env.keystoneUrl, login: env.user.login, password: 'definitely-wrong-pw' }, keystoneDomain: env.domain, keystoneProject: env.user.project, displayName: 'never' },
    });
    await expect(c.waitForJob(pub, { timeoutMs: 60_000, pollMs: 100 })).rejects.toMatchObject({ code: 'E_JOB_FAILED' });
    const st = await c.machineImagePublishedStatus_get({ uid: 'alice', aid, itid, pitid: pub.dbId! });
    expect(st.error).toBe(true);
    expect(st.errorMessage).toBeTruthy();
    expect(JSON.stringify(st)).not.toContain('definitely-wrong-pw');
  }, 900_000);
});
