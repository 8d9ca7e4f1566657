// examples/pulumi/index.ts run under `pulumi.runtime.setMocks`, laid out as a user's project (the program is
// compiled to CommonJS and requires `appliance-forge/pulumi` through node_modules). Checks the registered
// resources, their wiring, the provider text each class registers, and that credentials go to the engine
// as secrets with `additionalSecretOutputs` (the mock monitor sees the very RegisterResource requests).
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject, nodeRequire, providerTexts, REPO, type ResourceType } from '../support/pulumi-host';

type Pulumi = typeof import('@pulumi/pulumi');
type Ts = typeof import('typescript');

const SECRET_SIG = '1b47061264138c4ac30d75fd1eb44270';
const SIG_KEY = '4dabf18193072939515e22adb298388d';
const OS_PASSWORD = 'os-password-for-mocks-5b1e';

interface Registered {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
  raw: Record<string, unknown>;
  additionalSecretOutputs: string[];
}

const registered: Registered[] = [];
const project = makeProject('npm', 'forge-web');
let exportsOf: Record<string, unknown> = {};
let texts: Record<ResourceType, string>;

function mockState(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  const t = type.split(':').pop();
  const uri = `users/alice/${t === 'Software' ? 'mysoftware' : t === 'Appliance' ? 'appliances' : 'x'}/${name}`;
  switch (t) {
    case 'Software': return { ...inputs, uri, artifactUris: ['a1', 'a2'] };
    case 'Appliance': return { ...inputs, uri: 'users/alice/appliances/7', revision: 3, packageUris: ['distributions/1/pkgs/1'] };
    case 'MachineImage': return { ...inputs, uri: `users/alice/appliances/7/images/${name}`, sha256: 'ab'.repeat(32), fileSize: 1, downloadUri: 'd' };
    case 'Publication': return { ...inputs, uri: 'users/alice/appliances/7/images/2/pimages/1', cloudId: 'glance-id-1' };
    default: return inputs;
  }
}

beforeAll(async () => {
  texts = await providerTexts();
  const pulumi = nodeRequire('@pulumi/pulumi') as Pulumi;
  const ts = nodeRequire('typescript') as Ts;
  // The example, compiled as a user's `tsc` would, into a project whose node_modules link this package.
  const src = readFileSync(join(REPO, 'examples/pulumi/index.ts'), 'utf8');
  const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } }).outputText;
  writeFileSync(join(project.dir, 'index.js'), js);
  cpSync(join(REPO, 'examples/pulumi/files'), join(project.dir, 'files'), { recursive: true });

  // Record each RegisterResource request as the monitor receives it (the secret flags live there).
  const mocks = nodeRequire('@pulumi/pulumi/runtime/mocks') as { MockMonitor: { prototype: Record<string, (...a: never[]) => unknown> } };
  const original = mocks.MockMonitor.prototype.registerResource!;
  mocks.MockMonitor.prototype.registerResource = function (this: unknown, ...args: never[]) {
    const req = (args as unknown[])[0] as { getType(): string; getName(): string; getObject(): { toJavaScript(): Record<string, unknown> }; getAdditionalsecretoutputsList(): string[] };
    const raw = req.getObject().toJavaScript();
    registered.push({ type: req.getType(), name: req.getName(), inputs: {}, raw, additionalSecretOutputs: req.getAdditionalsecretoutputsList() });
    return original.apply(this, args);
  };

  await pulumi.runtime.setMocks({
    newResource: (a) => {
      const r = registered.find((x) => x.name === a.name)!;
      r.inputs = a.inputs as Record<string, unknown>;
      return { id: `${a.name}-id`, state: mockState(a.type, a.name, a.inputs as Record<string, unknown>) };
    },
    call: () => ({}),
  }, 'forge-web', 'dev', false);
  pulumi.runtime.setAllConfig({
    'forge-web:keystoneUrl': 'http://127.0.0.1:5000/v3',
    'forge-web:openstackLogin': 'demo',
    'forge-web:openstackPassword': OS_PASSWORD,
    'forge-web:keystoneProject': 'demo',
  }, ['forge-web:openstackPassword']);

  const program = nodeRequire(join(project.dir, 'index.js')) as Record<string, unknown>;
  const resolved: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(program)) {
    resolved[k] = await new Promise((res) => (v as { apply(f: (x: unknown) => void): void }).apply(res));
  }
  exportsOf = resolved;
});
afterAll(() => project.cleanup());

const byName = (name: string) => registered.find((r) => r.name === name)!;

describe('examples/pulumi/index.ts under mocks', () => {
  it('registers software, appliance, two images and a publication as dynamic resources of this package', () => {
    expect(registered.map((r) => `${r.type} ${r.name}`).sort()).toEqual([
      'pulumi-nodejs:dynamic/appliance-forge:Appliance web',
      'pulumi-nodejs:dynamic/appliance-forge:MachineImage web-openstack',
      'pulumi-nodejs:dynamic/appliance-forge:MachineImage web-qcow2',
      'pulumi-nodejs:dynamic/appliance-forge:Publication web-glance',
      'pulumi-nodejs:dynamic/appliance-forge:Software site',
    ]);
  });

  it('each class registers the provider text that the host tests run', () => {
    const typeOf = (r: Registered) => r.type.split(':').pop() as ResourceType;
    for (const r of registered) expect(r.inputs.__provider, r.name).toBe(texts[typeOf(r)]);
  });

  // The exports resolve only because the classes declare `revision`, `sha256`, `cloudId` … as outputs.
  it('wires outputs into inputs: software URIs, appliance URI and revision, image URI', () => {
    expect(byName('web').inputs.software).toEqual(['users/alice/mysoftware/site']);
    expect(byName('web').inputs.packages).toEqual(['nginx', 'curl']);
    expect(byName('web-qcow2').inputs).toMatchObject({ appliance: 'users/alice/appliances/7', applianceRevision: 3, format: 'QCOW2', compress: true });
    expect(byName('web-glance').inputs.image).toBe('users/alice/appliances/7/images/web-openstack');
    expect(exportsOf).toMatchObject({ applianceUri: 'users/alice/appliances/7', applianceRevision: 3, glanceImageId: 'glance-id-1', qcow2Sha256: 'ab'.repeat(32) });
  });

  it('sends the account as a secret and marks account and connection outputs secret', () => {
    const pub = byName('web-glance');
    expect(pub.additionalSecretOutputs).toEqual(expect.arrayContaining(['account', 'connection']));
    const account = pub.raw.account as Record<string, unknown>;
    expect(account[SIG_KEY]).toBe(SECRET_SIG);
    expect((account.value as Record<string, unknown>).password).toBe(OS_PASSWORD);
    // Nowhere else in any request does the password appear in plain text.
    for (const r of registered) {
      const { account: _a, ...rest } = r.raw;
      expect(JSON.stringify(rest)).not.toContain(OS_PASSWORD);
    }
    for (const r of registered) expect(r.additionalSecretOutputs, r.name).toContain('connection');
    // An appliance's installation may hold passwords: its output is a secret too.
    expect(byName('web').additionalSecretOutputs).toContain('installation');
  });
});
