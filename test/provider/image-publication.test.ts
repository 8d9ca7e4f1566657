// MachineImage and Publication through the real host: generate and wait, replace on any shaping change or a
// new appliance revision, drift and deletion on read; publish to the real loopback Glance and remove it again.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { startStack, UNKNOWN, urnOf, type Props, type Stack } from '../support/pulumi-host';
import { openStackServices, type OpenStackEnv } from '../support/openstack';

let stack: Stack;
let client: Client;
let applianceUri = '';
let revision = 0;

beforeAll(async () => {
  stack = await startStack('pnpm');
  client = createClient({ url: stack.server.url, auth: { login: stack.user.login, publicKey: stack.user.publicKey, secretKey: stack.user.secretKey } });
  writeFileSync(join(stack.project.dir, 'hello.sh'), '#!/bin/sh\necho hello\n');
  const a = await stack.host.check(urnOf('Appliance', 'img'), {}, {
    __provider: stack.providerText.Appliance, name: 'img', version: '1', distribution: { name: 'Debian', version: '12' },
  });
  const r = await stack.host.create(urnOf('Appliance', 'img'), a.inputs);
  applianceUri = r.id;
  revision = r.properties.revision as number;
});
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

const imageInputs = (over: Props = {}): Props => ({
  __provider: stack.providerText.MachineImage, appliance: applianceUri, applianceRevision: revision,
  format: 'QCOW2', diskSize: 1024, memorySize: 512, timeout: 600, ...over,
});

describe('MachineImage', () => {
  const urn = urnOf('MachineImage', 'qcow2');
  let id = '';
  let state: Props = {};

  it('check: failures per property; unknown appliance in preview passes', async () => {
    const bad = await stack.host.check(urn, {}, { __provider: stack.providerText.MachineImage, appliance: 'appliances/1', diskSize: 1.5, compress: 'yes' });
    expect(bad.failures.map((f) => f.property).sort()).toEqual(['appliance', 'compress', 'diskSize', 'format']);
    expect(bad.failures.find((f) => f.property === 'diskSize')!.reason).toMatch(/whole number .* \(MiB\)/);
    const preview = await stack.host.check(urn, {}, imageInputs({ appliance: UNKNOWN, applianceRevision: UNKNOWN }));
    expect(preview.failures).toEqual([]);
  });

  it('create: generates, waits, and outputs uri, sha256, fileSize, downloadUri, sbomUris', async () => {
    const checked = await stack.host.check(urn, {}, imageInputs());
    const r = await stack.host.create(urn, checked.inputs);
    id = r.id;
    state = r.properties;
    expect(id).toMatch(new RegExp(`^${applianceUri}/images/\\d+$`));
    const img = await client.machineImage_get({ aid: applianceUri.split('/').pop()!, itid: id.split('/').pop()! });
    expect(img.status!.complete).toBe(true);
    expect(state.sha256).toBe(img.sha256sum);
    expect(state.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(state.fileSize).toBe(img.fileSize);
    expect(state.downloadUri).toBe(img.downloadUri);
    // The SBOMs' URIs (not their content: the state stays small), served by the reference server.
    expect(state.sbomUris).toEqual({ spdx: `${id}/sbom/spdx`, cyclonedx: `${id}/sbom/cyclonedx` });
    const to = join(tmpdir(), `af-sbom-${process.pid}.json`);
    try {
      await client.download((state.sbomUris as { spdx: string }).spdx, { to });
      expect(JSON.parse(readFileSync(to, 'utf8'))).toMatchObject({ spdxVersion: 'SPDX-2.3', packages: expect.arrayContaining([expect.objectContaining({ name: 'dpkg' })]) as unknown });
    } finally {
      rmSync(to, { force: true });
    }
  });

  it('diff: every shaping input and a new appliance revision replace; timeout only updates', async () => {
    const d = async (over: Props) => stack.host.diff(id, urn, state, (await stack.host.check(urn, state, imageInputs(over))).inputs);
    expect(await d({})).toEqual({ changes: 'none', replaces: [], deleteBeforeReplace: false });
    expect((await d({ format: 'VMware' })).replaces).toEqual(['format']);
    expect((await d({ diskSize: 2048 })).replaces).toEqual(['diskSize']);
    expect((await d({ compress: true })).replaces).toEqual(['compress']);
    expect((await d({ applianceRevision: revision + 1 })).replaces).toEqual(['applianceRevision']);
    expect((await d({ applianceRevision: UNKNOWN })).replaces).toEqual(['applianceRevision']);
    expect(await d({ timeout: 1200 })).toEqual({ changes: 'some', replaces: [], deleteBeforeReplace: false });
    const u = await stack.host.update(id, urn, state, (await stack.host.check(urn, state, imageInputs({ timeout: 1200 }))).inputs);
    expect(u.properties.timeout).toBe(1200);
    expect(u.properties.sha256).toBe(state.sha256);
  });

  it('a second generation of the same format while one runs is refused with adopt advice; adopt waits for it', async () => {
    const aid = applianceUri.split('/').pop()!;
    const running = await client.machineImage_generate({ aid, body: { targetFormat: { name: 'Raw Virtual Disk' }, installProfile: { diskSize: 1024, memorySize: 512 } } });
    const checked = await stack.host.check(urnOf('MachineImage', 'raw'), {}, imageInputs({ format: 'Raw Virtual Disk' }));
    await expect(stack.host.create(urnOf('MachineImage', 'raw'), checked.inputs)).rejects.toThrow(/already exists.*adopt/);
    const adopted = await stack.host.create(urnOf('MachineImage', 'raw'), { ...checked.inputs, adopt: true });
    expect(adopted.id).toBe(running.uri);
    expect(adopted.properties.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('read: deleted on the service → removed from state; delete tolerates it', async () => {
    expect((await stack.host.read(id, urn, state)).properties.sha256).toBe(state.sha256);
    await client.machineImage_delete({ aid: applianceUri.split('/').pop()!, itid: id.split('/').pop()! });
    expect((await stack.host.read(id, urn, state)).id).toBe('');
    await stack.host.delete(id, urn, state);
  });

  it('a failed generation leaves nothing behind and says why', async () => {
    const checked = await stack.host.check(urn, {}, imageInputs({ format: 'No Such Format' }));
    await expect(stack.host.create(urn, checked.inputs)).rejects.toThrow(/No Such Format/);
  });
});

const os = openStackServices();
if (os.skip) console.warn(`SKIP Publication: ${os.skip}`);

describe.skipIf(!os.env)('Publication to the real loopback Glance', () => {
  const env = os.env as OpenStackEnv;
  const urn = urnOf('Publication', 'glance');
  let imageUri = '';

  const pubInputs = (over: Props = {}): Props => ({
    __provider: stack.providerText.Publication, image: imageUri,
    account: { keystoneUrl: env.keystoneUrl, glanceUrl: env.glanceUrl, login: env.user.login, password: env.user.password },
    keystoneDomain: env.domain, keystoneProject: env.user.project, displayName: `forge-pulumi-${process.pid}`, timeout: 600, ...over,
  });

  async function glanceStatus(id: string): Promise<number> {
    const auth = await fetch(`${env.keystoneUrl.replace(/\/v3\/?$/, '')}/v3/auth/tokens`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth: {
        identity: { methods: ['password'], password: { user: { name: env.user.login, domain: { name: env.domain }, password: env.user.password } } },
        scope: { project: { name: env.user.project, domain: { name: env.domain } } },
      } }),
    });
    const token = auth.headers.get('x-subject-token')!;
    const r = await fetch(`${env.glanceUrl.replace(/\/v2\/?$/, '')}/v2/images/${id}`, { headers: { 'x-auth-token': token, accept: 'application/json' } });
    await r.arrayBuffer();
    return r.status;
  }

  beforeAll(async () => {
    const checked = await stack.host.check(urnOf('MachineImage', 'os'), {}, imageInputs({ format: 'OpenStack QCOW2' }));
    imageUri = (await stack.host.create(urnOf('MachineImage', 'os'), checked.inputs)).id;
  });

  it('check: the account is required and its URLs checked; the appliance must be the image\'s', async () => {
    const bad = await stack.host.check(urn, {}, pubInputs({ account: { keystoneUrl: 'keystone', login: 'u' }, appliance: 'users/alice/appliances/999' }));
    expect(bad.failures.map((f) => f.property).sort()).toEqual(['account.keystoneUrl', 'account.password', 'appliance']);
    const preview = await stack.host.check(urn, {}, pubInputs({ image: UNKNOWN }));
    expect(preview.failures).toEqual([]);
  });

  it('create publishes and waits (cloudId = Glance id); diff; delete removes it from Glance', async () => {
    const checked = await stack.host.check(urn, {}, pubInputs());
    const r = await stack.host.create(urn, checked.inputs);
    const cloudId = r.properties.cloudId as string;
    expect(cloudId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await glanceStatus(cloudId)).toBe(200);

    const d = async (over: Props) => stack.host.diff(r.id, urn, r.properties, (await stack.host.check(urn, r.properties, pubInputs(over))).inputs);
    expect((await d({})).changes).toBe('none');
    expect((await d({ displayName: 'other' })).replaces).toEqual(['displayName']);
    const rotated = { keystoneUrl: env.keystoneUrl, glanceUrl: env.glanceUrl, login: env.user.login, password: 'rotated' };
    expect(await d({ account: rotated })).toEqual({ changes: 'some', replaces: [], deleteBeforeReplace: false });
    expect((await d({ account: { ...rotated, keystoneUrl: 'http://127.0.0.1:5001/v3' } })).replaces).toEqual(['account']);

    expect((await stack.host.read(r.id, urn, r.properties)).properties.cloudId).toBe(cloudId);
    await stack.host.delete(r.id, urn, r.properties);
    expect(await glanceStatus(cloudId)).toBe(404);
    expect((await stack.host.read(r.id, urn, r.properties)).id).toBe('');
    await stack.host.delete(r.id, urn, r.properties);
  });

  it('a wrong password fails the create with a clear message and leaves no publication', async () => {
    const checked = await stack.host.check(urnOf('Publication', 'bad'), {}, pubInputs({ account: { keystoneUrl: env.keystoneUrl, glanceUrl: env.glanceUrl, login: env.user.login, password: 'wrong-password-1234' } }));
    const err = await stack.host.create(urnOf('Publication', 'bad'), checked.inputs).then(() => undefined, (e: Error) => e);
    expect(err?.message).toMatch(/publication of .* failed/);
    expect(err?.message).not.toContain('wrong-password-1234');
    const left = await client.machineImagePublished_getAll({ aid: applianceUri.split('/').pop()! });
    expect((left.publishImages ?? []).filter((p) => p.imageUri === imageUri)).toEqual([]);
  });
});
