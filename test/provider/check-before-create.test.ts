// Through the REAL dynamic-provider host against the reference server on 127.0.0.1
// (and, where an error's `code` and fields matter, the runtime's exported functions as the host calls them: the
// gRPC answer carries the message only). A preview (`check`) fails on what `up` would fail on, naming the
// property; a create that fails leaves nothing behind, so the corrected `up` just works; every provider error is
// a ForgeError with `code`, and a 401 names the URL, the user and where the credentials came from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { isForgeError } from '../../src/errors';
import { CONNECTION_ENV } from '../../src/engine/settings-env';
import { nodeRequire, startStack, urnOf, type Props, type Stack } from '../support/pulumi-host';

type Runtime = typeof import('../../provider/runtime/v1');
const runtime = () => nodeRequire('./dist/provider/runtime/v1.js') as Runtime;

let stack: Stack;
let client: Client;
const urn = urnOf('Appliance', 'typo');
const appliance = (over: Props = {}): Props => ({
  __provider: stack.providerText.Appliance, name: 'typo', version: '1',
  distribution: { name: 'Debian', version: '12', arch: 'x86_64' }, packages: ['curl'], ...over,
});

beforeAll(async () => {
  stack = await startStack('npm');
  client = createClient({ url: stack.server.url, auth: { login: stack.user.login, publicKey: stack.user.publicKey, secretKey: stack.user.secretKey } });
}, 120_000);
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

const appliancesNamed = async (name: string) => ((await client.appliance_getAll({})).appliances ?? []).filter((a) => a.name === name);

describe('preview checks what up needs, naming the property', () => {
  it('Appliance: an unknown release and an unknown package fail check, named as a user wrote them', async () => {
    const release = await stack.host.check(urn, {}, appliance({ distribution: { name: 'Debian', version: '14', arch: 'x86_64' } }));
    expect(release.failures).toEqual([{ property: 'distribution', reason: expect.stringMatching(/^distribution Debian 14 x86_64 is not offered by the service \(it offers Debian 12 x86_64/) }]);
    const pkg = await stack.host.check(urn, {}, appliance({ packages: ['curl', 'curlx'] }));
    expect(pkg.failures).toEqual([{ property: 'packages[1]', reason: 'packages[1]: package "curlx" is not in Debian 12 x86_64' }]);
    // The model's closed lists, offline, as validate checks a declaration.
    const name = await stack.host.check(urn, {}, appliance({ distribution: { name: 'debian', version: '12' } }));
    expect(name.failures).toEqual([{ property: 'distribution.name', reason: expect.stringContaining('did you mean "Debian"?') }]);
    const ok = await stack.host.check(urn, {}, appliance());
    expect(ok.failures).toEqual([]);
  });

  it('MachineImage: a format the service does not offer fails check, with the near miss', async () => {
    const r = await stack.host.check(urnOf('MachineImage', 'img'), {}, { __provider: stack.providerText.MachineImage, appliance: 'users/alice/appliances/1', format: 'qcow' });
    expect(r.failures).toEqual([{ property: 'format', reason: expect.stringMatching(/^format: unknown image format "qcow" \(the service offers: .*\); did you mean "QCOW2"\?$/) }]);
  });
});

describe('a create that fails leaves nothing behind', () => {
  it('a misspelled package fails up before the appliance exists; the corrected up creates it (no 409, no adopt)', async () => {
    const typo = await stack.host.check(urn, {}, appliance({ packages: ['curlx'] }));
    // As if the preview had been skipped (`up --skip-preview`): the create itself refuses before any write.
    const failed = await stack.host.create(urn, typo.inputs).then(() => undefined, (x: unknown) => x);
    expect(failed).toBeDefined();
    expect(await appliancesNamed('typo')).toEqual([]);
    expect(String(failed)).toMatch(/package "curlx" is not in Debian 12 x86_64/);
    const fixed = await stack.host.check(urn, {}, appliance());
    const r = await stack.host.create(urn, fixed.inputs);
    expect(r.id).toMatch(/^users\/alice\/appliances\/\d+$/);
    expect(await appliancesNamed('typo')).toHaveLength(1);
  });
});

describe('typed errors', () => {
  it('an input the service does not know is a ProviderError with code, kind and the failures by property', async () => {
    const v1 = runtime();
    const holder = {};
    v1.configure(holder, { get: (k) => ({ 'appliance-forge:url': stack.server.url, 'appliance-forge:user': stack.user.login, 'appliance-forge:apiKey': stack.user.publicKey, 'appliance-forge:secretKey': stack.user.secretKey })[k] });
    const { inputs } = await v1.check('appliance', {}, { name: 'typed', version: '1', distribution: { name: 'Debian', version: '12' }, packages: ['nosuchpkg'] });
    const e = await v1.create('appliance', holder, inputs).catch((x: unknown) => x);
    expect(isForgeError(e)).toBe(true);
    expect(e).toMatchObject({ code: 'E_PROVIDER', kind: 'input', failures: [{ property: 'packages[0]', reason: 'packages[0]: package "nosuchpkg" is not in Debian 12 x86_64' }] });
    expect(await appliancesNamed('typed')).toEqual([]);
  });

  it('a 401 names the URL, the user and where the credentials came from (configuration or environment)', async () => {
    const v1 = runtime();
    const config = (password: string | undefined) => (k: string) =>
      ({ 'appliance-forge:url': stack.server.url, 'appliance-forge:user': stack.user.login, ...(password ? { 'appliance-forge:password': password } : {}) } as Record<string, string>)[k];
    const byConfig = {};
    v1.configure(byConfig, { get: config('wrong') });
    const e = await v1.check('appliance', {}, { name: 'auth', version: '1', distribution: { name: 'Debian', version: '12' } }, byConfig).catch((x: unknown) => x);
    expect(e).toMatchObject({
      code: 'E_PROVIDER', kind: 'auth', url: stack.server.url, user: stack.user.login,
      credentials: 'the password from the stack configuration (appliance-forge:password)',
    });
    expect((e as Error).message).toMatch(new RegExp(`^401: .*: the service at ${stack.server.url.replace(/[.]/g, '\\.')} refused user "alice" with the password from the stack configuration`));
    const saved = process.env[CONNECTION_ENV.password];
    process.env[CONNECTION_ENV.password] = 'also-wrong';
    const byEnv = {};
    try {
      v1.configure(byEnv, { get: config(undefined) });
    } finally {
      if (saved === undefined) delete process.env[CONNECTION_ENV.password];
      else process.env[CONNECTION_ENV.password] = saved;
    }
    const viaHost = await v1.create('appliance', byEnv, { name: 'auth', version: '1', distribution: { name: 'Debian', version: '12' }, osProfile: 'Minimal', packages: [], software: [] }).catch((x: unknown) => x);
    expect(viaHost).toMatchObject({ code: 'E_PROVIDER', kind: 'auth', credentials: 'the password from the environment (APPLIANCE_FORGE_PASSWORD)' });
  });

  it('through the real host, the 401 message carries the same context', async () => {
    const wrong = await startStack('npm', { config: (server, user) => ({ 'appliance-forge:url': server.url, 'appliance-forge:user': user.login, 'appliance-forge:password': 'wrong' }) });
    try {
      const u = urnOf('Software', 'auth');
      const checked = await wrong.host.check(u, {}, { __provider: wrong.providerText.Software, name: 'auth', version: '1' });
      await expect(wrong.host.create(u, checked.inputs)).rejects.toThrow(/401: .* the service at http:\/\/127\.0\.0\.1:\d+\/api refused user "alice" with the password from the stack configuration \(appliance-forge:password\)/);
    } finally {
      await wrong.close();
    }
  }, 120_000);
});
