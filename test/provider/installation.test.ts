// Appliance.installation through the REAL dynamic-provider host against the reference server on 127.0.0.1:
// the service gets the install profile, keeps only a sha512-crypt hash of the password (checked with openssl).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { startStack, urnOf, type Stack } from '../support/pulumi-host';

let stack: Stack;
let client: Client;
const PASSWORD = 'provider-root-pw-7731';

beforeAll(async () => {
  stack = await startStack('npm');
  client = createClient({ url: stack.server.url, auth: { login: stack.user.login, publicKey: stack.user.publicKey, secretKey: stack.user.secretKey } });
});
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

/** Every stored sha512-crypt hash in the server's data dir (its bytes, not its answers). */
function storedHashes(): string[] {
  const dir = stack.dataDir;
  const bytes = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .flatMap((f) => { try { return [readFileSync(join(dir, f)).toString('latin1')]; } catch { return []; } })
    .join('\n');
  expect(bytes).not.toContain(PASSWORD);
  return [...bytes.matchAll(/\$6\$[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{86}/g)].map((m) => m[0]);
}
const crypt = (pw: string, hash: string) => execFileSync('openssl', ['passwd', '-6', '-salt', hash.split('$')[2]!, pw], { encoding: 'utf8' }).trim();

describe('Appliance installation', () => {
  const urn = urnOf('Appliance', 'inst');
  const inputs = (installation: unknown) => ({
    __provider: stack.providerText.Appliance, name: 'inst', version: '1',
    distribution: { name: 'Debian', version: '12', arch: 'x86_64' }, installation,
  });

  it('check: a field the image build does not set is a failure naming it', async () => {
    const bad = await stack.host.check(urn, {}, inputs({ timezone: 'Etc/UTC', hostname: 'x', users: [{ name: 'a', sudo: true }] }));
    expect(bad.failures.map((f) => f.property).sort()).toEqual(['installation.hostname', 'installation.users[0].sudo']);
  });

  it('create writes the profile; update of the password rewrites the hash', async () => {
    const want = { timezone: 'Europe/Paris', kernelParams: 'console=ttyS0', rootUser: { password: PASSWORD }, users: [{ name: 'deploy', secondaryGroups: ['sudo'] }] };
    const checked = await stack.host.check(urn, {}, inputs(want));
    expect(checked.failures).toEqual([]);
    const r = await stack.host.create(urn, checked.inputs);
    const app = await client.appliance_get({ aid: r.id.split('/').pop()! });
    expect(app.installProfile).toMatchObject({ timezone: 'Europe/Paris', kernelParameters: 'console=ttyS0', rootUser: { encrypted: true } });
    expect(app.installProfile!.users!.map((u) => [u.name, u.secondaryGroups])).toEqual([['deploy', 'sudo']]);
    expect(JSON.stringify(app)).not.toContain(PASSWORD);
    const hashes = storedHashes();
    expect(hashes.some((h) => crypt(PASSWORD, h) === h)).toBe(true);

    const next = { ...want, rootUser: { password: `${PASSWORD}-2` } };
    const checked2 = await stack.host.check(urn, r.properties, inputs(next));
    await stack.host.update(r.id, urn, r.properties, checked2.inputs);
    const after = storedHashes();
    expect(after.some((h) => crypt(`${PASSWORD}-2`, h) === h)).toBe(true);
    // (The old hash may linger in SQLite's free pages or WAL until a checkpoint: its absence is not asserted.)
  });
});
