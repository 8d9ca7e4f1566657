// Through the REAL dynamic-provider host against the reference server on 127.0.0.1: a
// MachineImage outputs whole URLs (`downloadUrl`, `sbomUrls`) beside the relative URIs, under the service's base
// URL, so a program can export them; they fetch the very bytes the image's sha256 names.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { startStack, urnOf, type Props, type Stack } from '../support/pulumi-host';

let stack: Stack;
let client: Client;
let applianceUri = '';
let revision = 0;

beforeAll(async () => {
  stack = await startStack('npm');
  client = createClient({ url: stack.server.url, auth: { login: stack.user.login, publicKey: stack.user.publicKey, secretKey: stack.user.secretKey } });
  const a = await stack.host.check(urnOf('Appliance', 'urls'), {}, {
    __provider: stack.providerText.Appliance, name: 'urls', version: '1', distribution: { name: 'Debian', version: '12' },
  });
  const r = await stack.host.create(urnOf('Appliance', 'urls'), a.inputs);
  applianceUri = r.id;
  revision = r.properties.revision as number;
}, 120_000);
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

describe('MachineImage outputs whole URLs', () => {
  it('downloadUrl and sbomUrls are the URIs under the base URL, and fetch the image and its SBOM', async () => {
    const urn = urnOf('MachineImage', 'urls');
    const checked = await stack.host.check(urn, {}, {
      __provider: stack.providerText.MachineImage, appliance: applianceUri, applianceRevision: revision, format: 'QCOW2', diskSize: 1024, memorySize: 512, timeout: 600,
    });
    expect(checked.failures).toEqual([]);
    const state: Props = (await stack.host.create(urn, checked.inputs)).properties;
    expect(state.downloadUrl).toBe(`${stack.server.url}/${state.downloadUri as string}`);
    expect(state.downloadUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/users\/alice\//);
    const sbomUris = state.sbomUris as Record<string, string>;
    expect(state.sbomUrls).toEqual(Object.fromEntries(Object.entries(sbomUris).map(([k, v]) => [k, `${stack.server.url}/${v}`])));
    const to = join(tmpdir(), `af-url-${process.pid}`);
    try {
      await client.download(state.downloadUrl as string, { to });
      expect(createHash('sha256').update(readFileSync(to)).digest('hex')).toBe(state.sha256);
      await client.download((state.sbomUrls as Record<string, string>).spdx!, { to: `${to}.spdx.json` });
      expect(JSON.parse(readFileSync(`${to}.spdx.json`, 'utf8'))).toMatchObject({ spdxVersion: 'SPDX-2.3' });
    } finally {
      rmSync(to, { force: true });
      rmSync(`${to}.spdx.json`, { force: true });
    }
    // A refresh (read) gives them too.
    const read = await stack.host.read(state.uri as string, urn, state);
    expect(read.properties.downloadUrl).toBe(state.downloadUrl);
  }, 300_000);
});
