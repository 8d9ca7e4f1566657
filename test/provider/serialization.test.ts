// The serialized provider: small, free of credentials, and loadable the way the dynamic-provider host loads
// it (require-from-string from the project folder) under an npm and a pnpm layout.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertProviderBuilt, makeProject, nodeRequire, PulumiHost, REPO, UNKNOWN, urnOf, type Layout } from '../support/pulumi-host';

type Forge = typeof import('../../provider/index');
type Pulumi = typeof import('@pulumi/pulumi');

const CREDS = {
  'appliance-forge:url': 'http://127.0.0.1:9/api',
  'appliance-forge:user': 'serial-user',
  'appliance-forge:apiKey': 'PUBKEY-serialization-7f3a',
  'appliance-forge:secretKey': 'SECRET-serialization-c41d',
  'appliance-forge:password': 'PASSWORD-serialization-99e2',
};
const SECRET_VALUES = [CREDS['appliance-forge:apiKey'], CREDS['appliance-forge:secretKey'], CREDS['appliance-forge:password']];
const MAX_PROVIDER_BYTES = 8 * 1024;

let forge: Forge;
let pulumi: Pulumi;
const texts = new Map<string, string>();

const requireFromString = nodeRequire('require-from-string') as (code: string, filename?: string) => { handler(): Record<string, (...a: unknown[]) => Promise<unknown>> };

beforeAll(async () => {
  assertProviderBuilt();
  forge = nodeRequire('./dist/provider/index.js') as Forge;
  pulumi = nodeRequire('@pulumi/pulumi') as Pulumi;
  const providers = {
    Software: forge.softwareProvider,
    Appliance: forge.applianceProvider,
    MachineImage: forge.machineImageProvider,
    Publication: forge.publicationProvider,
    CloudAccount: forge.cloudAccountProvider,
  };
  for (const [type, provider] of Object.entries(providers)) {
    // Configure first, in this process, with credentials: even then none may end up in the text.
    await provider.configure!({ config: { get: (k: string) => CREDS[k as keyof typeof CREDS] } } as never);
    const sf = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
    texts.set(type, sf.text);
  }
});

describe('serialized provider text', () => {
  it('is small, requires only the stable runtime subpath, and captures no credential', () => {
    expect(texts.size).toBe(5);
    for (const [type, text] of texts) {
      const size = Buffer.byteLength(text);
      expect(size, `${type} provider is ${size} bytes`).toBeLessThan(MAX_PROVIDER_BYTES);
      expect(text).toContain("require('appliance-forge/pulumi/runtime/v1')");
      // Nothing else is required, and no TypeScript helper is captured (target ≥ ES2017).
      expect(text.match(/require\(['"][^'"]+['"]\)/g)?.every((r) => r.includes('appliance-forge/pulumi/runtime/v1'))).toBe(true);
      expect(text).not.toContain('__awaiter');
      for (const s of [...SECRET_VALUES, CREDS['appliance-forge:user']]) expect(text).not.toContain(s);
    }
    // Figure for the report.
    console.log('serialized provider sizes:', Object.fromEntries([...texts].map(([t, x]) => [t, Buffer.byteLength(x)])));
  });
});

describe.each<Layout>(['npm', 'pnpm'])('loaded as the host loads it, %s layout', (layout) => {
  const project = makeProject(layout);
  let host: PulumiHost;
  beforeAll(async () => {
    writeFileSync(join(project.dir, 'app.tar'), 'payload');
    host = await PulumiHost.start({ cwd: project.dir });
    await host.configure(CREDS);
  });
  afterAll(async () => {
    await host?.close();
    project.cleanup();
  });

  it('require-from-string resolves the runtime from the project folder', async () => {
    const p = requireFromString(texts.get('Appliance')!, join(project.dir, '__provider.js')).handler();
    const r = (await p.check!({}, { name: 'web', version: '1', distribution: { name: 'Debian', version: '12' } })) as { failures: unknown[] };
    expect(r.failures).toEqual([]);
  });

  it('the real host runs Check with the provider text', async () => {
    const urn = urnOf('Software', 'app');
    const r = await host.check(urn, {}, {
      __provider: texts.get('Software')!,
      name: 'app', version: '1.0',
      files: [{ source: 'app.tar', destination: '/opt/app' }, { source: UNKNOWN }],
    });
    expect(r.failures).toEqual([]);
    const files = r.inputs.files as Array<Record<string, unknown>>;
    // sha256("payload"), computed independently of the code under test.
    expect(files[0]!.sha256).toBe('239f59ed55e737c77147cf55ad0c1b030b6d7ee748a7426952f9b852d5a935e5');
    expect(files[1]).toEqual({ source: UNKNOWN, sha256: UNKNOWN });
    expect(r.inputs.__provider).toBe(texts.get('Software'));
  });
});

describe('a project where appliance-forge is not installed', () => {
  it('fails to load the runtime, with the module named', async () => {
    const project = makeProject('npm');
    const { rmSync } = await import('node:fs');
    rmSync(join(project.dir, 'node_modules/appliance-forge'));
    const host = await PulumiHost.start({ cwd: project.dir });
    try {
      await expect(host.check(urnOf('Software', 'x'), {}, { __provider: texts.get('Software')!, name: 'x', version: '1' }))
        .rejects.toThrow(/appliance-forge\/pulumi\/runtime\/v1/);
    } finally {
      await host.close();
      project.cleanup();
    }
  });
});

it('the repository is the package the layouts link to', () => {
  expect((nodeRequire(join(REPO, 'package.json')) as { name: string }).name).toBe('appliance-forge');
});
