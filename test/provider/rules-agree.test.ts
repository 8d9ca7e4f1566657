// One rule, three readers: the same value is refused with the same words by the reference server (a 400
// over HTTP on 127.0.0.1), the engine's `validate` (a problem at its line) and the provider's `check` (a
// failure through the REAL dynamic-provider host), and a value one accepts the others accept.
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { parseDeclaration } from '../../src/engine/parse';
import { RULES } from '../../src/model/field-rules';
import { uriParams } from '../../src/model/uris';
import { startStack, urnOf, type Stack } from '../support/pulumi-host';

let stack: Stack;
let client: Client;
let msid = '';

beforeAll(async () => {
  stack = await startStack('npm');
  client = createClient({ url: stack.server.url, auth: { login: stack.user.login, publicKey: stack.user.publicKey, secretKey: stack.user.secretKey } });
  writeFileSync(`${stack.project.dir}/app.conf`, 'port=8080\n');
  const sw = await client.mySoftware_create({ body: { name: 'rules', version: '1' } });
  msid = uriParams('mySoftware_get', sw.uri!).msid;
});
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

/** The server's message for a body, or '' when it is accepted. */
async function serverSays(send: () => Promise<unknown>): Promise<string> {
  try {
    await send();
    return '';
  } catch (e) {
    expect((e as { status?: number }).status).toBe(400);
    return (e as Error).message;
  }
}

/** The errors `validate` reports for a declaration (its vocabularies and the service's rules on). */
function engineSays(stackYaml: string): string[] {
  const text = `stack:\n  name: rules\n  version: '1'\n  os: {name: Debian, version: '12'}\n${stackYaml}\nbuilders:\n  - type: QCOW2\n`;
  const r = parseDeclaration(text, { file: 'rules.yml', dir: stack.project.dir, vocabularies: true, envOptional: true });
  return r.problems.filter((p) => p.severity === 'error').map((p) => p.message);
}

/** The provider's failures for a resource's inputs. */
async function providerSays(type: 'Software' | 'Appliance', inputs: Record<string, unknown>): Promise<string[]> {
  const r = await stack.host.check(urnOf(type, 'rules'), {}, { __provider: stack.providerText[type], name: 'rules', version: '1', ...inputs });
  return r.failures.map((f) => f.reason);
}

describe('a software file', () => {
  type FileFields = { ownerGroup?: string; rights?: string; destination?: string };
  const file = (f: FileFields) => ({
    // The service's name for a file's destination is installLocation.
    server: () => client.mySoftwareArtifact_add({ msid, body: { kind: 'SoftwareFile', name: 'app.conf', installLocation: f.destination, ownerGroup: f.ownerGroup, rights: f.rights } }),
    engine: `  bundles:\n    - name: b\n      version: '1'\n      files:\n        - {source: app.conf, ${Object.entries(f).map(([k, v]) => `${k}: '${v}'`).join(', ')}}`,
    provider: { files: [{ source: 'app.conf', ...f }] },
  });

  it.each([
    ['ownerGroup', { ownerGroup: 'root:adm:wheel' }, RULES.ownerGroup.says],
    ['ownerGroup', { ownerGroup: 'root:' }, RULES.ownerGroup.says],
    ['rights', { rights: '0999' }, RULES.rights.says],
    ['destination', { destination: '/opt/../etc' }, RULES.installLocation.says],
  ] as const)('%s %j: the same rule refuses it on all three sides', async (_field, f, says) => {
    const t = file(f);
    expect(await serverSays(t.server)).toContain(`must be ${says}`);
    expect(engineSays(t.engine)).toEqual([expect.stringContaining(`must be ${says}`)]);
    expect(await providerSays('Software', t.provider)).toEqual([expect.stringContaining(`must be ${says}`)]);
  });

  it.each([{ ownerGroup: 'www-data' }, { ownerGroup: 'www-data:adm' }, { rights: '0640', destination: '/etc/app' }])('%j is accepted on all three sides', async (f) => {
    const t = file(f);
    expect(await serverSays(t.server)).toBe('');
    expect(engineSays(t.engine)).toEqual([]);
    expect(await providerSays('Software', t.provider)).toEqual([]);
  });
});

describe('an install profile', () => {
  const profile = (declared: Record<string, unknown>, model: Record<string, unknown>) => ({
    server: () => client.appliance_create({ body: { name: `rules-${Date.now()}`, version: '1', distributionUri: 'distributions/1', installProfile: model } }),
    engine: `  installation: ${JSON.stringify(declared)}`,
    provider: { distribution: { name: 'Debian', version: '12', arch: 'x86_64' }, installation: declared },
  });

  it.each([
    ['a kernel word grub.cfg cannot carry', { kernelParams: 'quiet;' }, { kernelParameters: 'quiet;' }, `word "quiet;" may hold only ${RULES.kernelWord.says}`],
    ['a user the image already has', { users: [{ name: 'daemon' }] }, { users: [{ name: 'daemon' }] }, 'users[0].name "daemon" is an account the image already has'],
    ['a disk below the smallest', { diskSize: 512 }, { diskSize: 512 }, 'diskSize must be a whole number of MiB from 1024'],
    ['a group that is nowhere', { users: [{ name: 'ann', primaryGroup: 'wheel' }] }, { users: [{ name: 'ann', primaryGroup: 'wheel' }] }, '"wheel" is neither a declared group nor a standard Debian group'],
  ])('%s: the model checker refuses it on all three sides', async (_label, declared, model, says) => {
    const t = profile(declared, model);
    expect(await serverSays(t.server)).toContain(says.replace('users[0]', 'installProfile.users[0]'));
    expect(engineSays(t.engine)).toEqual([expect.stringContaining(says.replace('users[0]', 'users[]'))]);
    expect(await providerSays('Appliance', t.provider)).toEqual([expect.stringContaining(says)]);
  });
});
