// Package pins through the API: `pkgs/pkg` entries of `PUT …/osprofile/<osid>/pkgs`
// pin a package to a full Debian version (any version: the mirror, not the catalog, decides at build
// time), the profile's package list shows it, and the generation job's `packageRequestsOf` asks for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/server/catalog';
import { packageRequestsOf } from '../../src/server/install/packages';
import type { OsProfileDoc } from '../../src/server/store/docs';
import { startTestServer, validatesAgainstXsd, type TestServer } from './helpers';

const JSON_H = { 'content-type': 'application/json', accept: 'application/json' };
const msg = (text: string): string => (JSON.parse(text) as { uforgeError: { localizedErrorMsg: { message: string } } }).uforgeError.localizedErrorMsg.message;

describe('package pins', () => {
  let t: TestServer;
  let base = '';
  let osid = 0;
  const catalog = loadCatalog();
  const find = (name: string) => catalog.searchPackages(1, { query: `name==${name}`, latestOnly: true }).items[0]!;
  const put = (pkgs: unknown, extra: Record<string, unknown> = {}) =>
    t.raw('PUT', `${base}/osprofile/${osid}/pkgs`, { headers: JSON_H, body: JSON.stringify({ packages: { ...extra, pkgs: { pkg: pkgs } } }) });
  const storedDoc = async (): Promise<OsProfileDoc> => JSON.parse((await t.stored.recordDoc('osprofile', osid))!) as OsProfileDoc;

  beforeAll(async () => {
    t = await startTestServer();
    const r = await t.raw('POST', 'users/alice/appliances', { headers: JSON_H, body: JSON.stringify({ appliance: { name: 'pins', version: '1', distributionUri: 'distributions/1' } }) });
    const aid = JSON.parse(r.text).appliance.dbId as number;
    base = `users/alice/appliances/${aid}`;
    const p = await t.raw('POST', `${base}/osprofile`, { headers: JSON_H, body: JSON.stringify({ linuxProfile: { name: 'Minimal', standardProfileUri: 'distributions/1/profiles/1' } }) });
    osid = JSON.parse(p.text).distribProfile.dbId as number;
  });
  afterAll(async () => t.close());

  it('pins by name (added to the profile) and by uri (a base package), shows the pinned versions, asks the job for them', async () => {
    const curl = find('curl');
    const bash = find('bash');
    const r = await put([
      { name: 'curl', arch: 'amd64', version: '7.88.1', release: '10+deb12u5' },
      { uri: bash.uri, epoch: 1, version: '5.2.15', release: '2' },
    ]);
    expect(r.status).toBe(200);
    const list = JSON.parse(r.text).packages.pkgs.pkg as Array<{ name: string; version: string; release?: string; epoch?: number }>;
    expect(list.find((p) => p.name === 'curl')).toMatchObject({ version: '7.88.1', release: '10+deb12u5', epoch: 0 });
    expect(list.find((p) => p.name === 'bash')).toMatchObject({ version: '5.2.15', release: '2', epoch: 1 });
    expect((await storedDoc()).pins).toEqual({ [String(curl.dbId)]: '7.88.1-10+deb12u5', [String(bash.dbId)]: '1:5.2.15-2' });
    const xml = await t.raw('GET', `${base}/osprofile/${osid}/pkgs`, { headers: { accept: 'application/xml' } });
    expect(xml.text).toContain('<name>curl</name>');
    expect(validatesAgainstXsd(xml.text)).toBe(true);

    const asked = packageRequestsOf(catalog, (await storedDoc()));
    expect(asked.profile).toBe('Minimal');
    expect(asked.packages).toHaveLength(2);
    expect(asked.packages).toEqual(expect.arrayContaining([
      { name: 'bash', arch: 'amd64', version: '1:5.2.15-2' },
      { name: 'curl', arch: 'amd64', version: '7.88.1-10+deb12u5' },
    ]));
  });

  it('an entry without a version unpins (the package follows the mirror); deleting a package drops its pin', async () => {
    const curl = find('curl');
    const bash = find('bash');
    expect((await put([{ uri: bash.uri }])).status).toBe(200);
    expect((await storedDoc()).pins).toEqual({ [String(curl.dbId)]: '7.88.1-10+deb12u5' });
    // bash is a base package again without its pin: the job does not ask for it.
    expect(packageRequestsOf(catalog, (await storedDoc())).packages).toEqual([{ name: 'curl', arch: 'amd64', version: '7.88.1-10+deb12u5' }]);
    const del = await t.raw('PUT', `${base}/osprofile/${osid}/pkgs`, { headers: JSON_H, body: JSON.stringify({ packages: { deletedPkgUris: { uri: [curl.uri] } } }) });
    expect(del.status).toBe(200);
    expect((await storedDoc()).pins).toBeUndefined();
    // Added without a pin: asked for by name only.
    expect((await put([{ name: 'curl' }])).status).toBe(200);
    expect(packageRequestsOf(catalog, (await storedDoc())).packages).toEqual([{ name: 'curl', arch: 'amd64' }]);
  });

  it.each([
    ['no version but a release', [{ name: 'curl', release: '1' }], /pkgs\[0\]\.version is required/],
    ['version with a shell character', [{ name: 'curl', version: '7.88;rm' }], /pkgs\[0\]\.version "7\.88;rm" is not a Debian version/],
    ['version not starting with a digit', [{ name: 'curl', version: 'latest' }], /pkgs\[0\]\.version/],
    ['colon without an epoch field', [{ name: 'curl', version: '1:7.88.1' }], /pkgs\[0\]\.version/],
    ['bad release', [{ name: 'curl', version: '7.88.1', release: 'a b' }], /pkgs\[0\]\.release/],
    ['negative epoch', [{ name: 'curl', version: '7.88.1', epoch: -1 }], /pkgs\[0\]\.epoch/],
    ['unknown name', [{ name: 'no-such-package-xyz', version: '1.0' }], /pkgs\[0\]: no package "no-such-package-xyz"/],
    ['unknown uri', [{ uri: 'distributions/1/pkgs/99999999', version: '1.0' }], /pkgs\[0\]\.uri .* names no package/],
    ['neither uri nor name', [{ version: '1.0' }], /pkgs\[0\] needs uri, or name/],
    ['second entry bad', [{ name: 'curl', version: '7.88.1' }, { name: 'curl', version: '$(x)' }], /pkgs\[1\]\.version/],
  ])('%s: 400 naming the entry, nothing changed', async (_l, pkgs, message) => {
    const before = await storedDoc();
    const r = await put(pkgs);
    expect(r.status).toBe(400);
    expect(msg(r.text)).toMatch(message);
    expect(await storedDoc()).toEqual(before);
  });
});
