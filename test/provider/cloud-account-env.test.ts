// Through the REAL dynamic-provider host: where the provider finds the service when the stack configuration
// does not say (the APPLIANCE_FORGE_* variables, as the command line reads them), that credentials never
// reach the state from there, and CloudAccount's whole life (the reference server stores accounts without
// calling Keystone, so no cloud is needed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTION_ENV } from '../../src/engine/settings-env';
import { startStack, urnOf, type Props, type Stack } from '../support/pulumi-host';

type Config = (server: { url: string }, user: Stack['user']) => Record<string, string>;
const NO_CONFIG: Config = () => ({});
/** The runner's own variables must not decide these tests: each host gets all five, set or empty. */
const envOf = (s: Partial<Record<keyof typeof CONNECTION_ENV, string>>): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(CONNECTION_ENV).map(([k, name]) => [name, s[k as keyof typeof CONNECTION_ENV] ?? '']));

const software = (stack: Stack, name: string): Props => ({ __provider: stack.providerText.Software, name, version: '1' });

async function createSoftware(stack: Stack, name: string): Promise<{ id: string; properties: Props }> {
  const urn = urnOf('Software', name);
  const checked = await stack.host.check(urn, {}, software(stack, name));
  expect(checked.failures).toEqual([]);
  return stack.host.create(urn, checked.inputs);
}

describe('provider settings from APPLIANCE_FORGE_* when the stack configuration has none', () => {
  const stacks: Stack[] = [];
  afterAll(async () => {
    for (const s of stacks) await s.close();
  });
  const start = async (env: Parameters<typeof envOf>[0] | ((url: string, u: Stack['user']) => Parameters<typeof envOf>[0]), config: Config = NO_CONFIG) => {
    const s = await startStack('npm', { env: (server, user) => envOf(typeof env === 'function' ? env(server.url, user) : env), config });
    stacks.push(s);
    return s;
  };

  it('url, user and key pair from the environment: create and read work, and no credential is in the state', async () => {
    const stack = await start((url, u) => ({ url, user: u.login, apiKey: u.publicKey, secretKey: u.secretKey }));
    const r = await createSoftware(stack, 'from-env');
    expect(r.id).toMatch(/^users\/alice\/mysoftware\/\d+$/);
    const read = await stack.host.read(r.id, urnOf('Software', 'from-env'), r.properties);
    expect(read.id).toBe(r.id);
    for (const props of [r.properties, read.properties]) {
      const text = JSON.stringify(props);
      expect(text).not.toContain(stack.user.secretKey);
      expect(text).not.toContain(stack.user.publicKey);
      expect(props).not.toHaveProperty('connection');
    }
  });

  it('the configuration wins over the environment, and credentials come whole from one place', async () => {
    // A wrong URL in the environment loses to the configured one.
    const byConfig = await start(
      (_url, u) => ({ url: 'http://127.0.0.1:9/api', user: 'nobody', apiKey: u.publicKey, secretKey: u.secretKey }),
      (server, u) => ({ 'appliance-forge:url': server.url, 'appliance-forge:user': u.login }),
    );
    expect((await createSoftware(byConfig, 'config-url')).id).toMatch(/^users\/alice\/mysoftware\/\d+$/);

    // A configured password is not mixed with the environment's valid key pair: the service refuses it.
    const mixed = await start((url, u) => ({ url, user: u.login, apiKey: u.publicKey, secretKey: u.secretKey }), () => ({
      'appliance-forge:password': 'not-the-password',
    }));
    const e = await createSoftware(mixed, 'mixed').catch((x: unknown) => x);
    expect(String(e)).toMatch(/401/);
  });

  it('with nothing set anywhere, the failure names the configuration key and the variable', async () => {
    const stack = await start({});
    const e = await createSoftware(stack, 'nothing').catch((x: unknown) => x);
    expect(String(e)).toContain('pulumi config set appliance-forge:url');
    expect(String(e)).toContain(CONNECTION_ENV.url);
  });
});

describe('CloudAccount through the host', () => {
  let stack: Stack;
  const urn = urnOf('CloudAccount', 'acct');
  const PASSWORD = 'os-pass-7f3a19';
  const inputs = (over: Props = {}): Props => ({
    __provider: stack.providerText.CloudAccount, name: 'acct', keystoneUrl: 'http://127.0.0.1:5000/v3', login: 'demo', password: PASSWORD, ...over,
  });
  beforeAll(async () => {
    stack = await startStack('npm');
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('check: URLs and required fields, keystoneVersion defaults to v3', async () => {
    const { name: _name, password: _password, ...incomplete } = inputs({ keystoneUrl: 'keystone' });
    const bad = await stack.host.check(urn, {}, incomplete);
    expect(bad.failures.map((f) => f.property).sort()).toEqual(['keystoneUrl', 'name', 'password']);
    const ok = await stack.host.check(urn, {}, inputs());
    expect(ok.failures).toEqual([]);
    expect(ok.inputs.keystoneVersion).toBe('v3');
  });

  it('create, a password rotation updates in place, a rename replaces; read sees deletion; adopt takes it over', async () => {
    const checked = await stack.host.check(urn, {}, inputs());
    const r = await stack.host.create(urn, checked.inputs);
    expect(r.id).toMatch(/^users\/alice\/accounts\/\d+$/);
    expect(r.properties).toMatchObject({ uri: r.id, name: 'acct', login: 'demo' });

    const rotated = (await stack.host.check(urn, r.properties, inputs({ password: 'os-pass-rotated' }))).inputs;
    expect(await stack.host.diff(r.id, urn, r.properties, rotated)).toMatchObject({ changes: 'some', replaces: [] });
    const renamed = (await stack.host.check(urn, r.properties, inputs({ name: 'acct2' }))).inputs;
    expect((await stack.host.diff(r.id, urn, r.properties, renamed)).replaces).toEqual(['name']);
    const updated = await stack.host.update(r.id, urn, r.properties, rotated);
    expect(updated.properties.uri).toBe(r.id);

    // A second create of the same name meets the first: 409 with the adopt advice; adopt takes it over.
    const again = await stack.host.create(urn, checked.inputs).catch((x: unknown) => x);
    expect(String(again)).toContain('set `adopt: true`');
    const adopted = await stack.host.create(urn, { ...checked.inputs, adopt: true });
    expect(adopted.id).toBe(r.id);

    await stack.host.delete(r.id, urn, updated.properties);
    const gone = await stack.host.read(r.id, urn, updated.properties);
    expect(gone.id).toBe('');
    await stack.host.delete(r.id, urn, updated.properties); // already gone: no error
  });
});
