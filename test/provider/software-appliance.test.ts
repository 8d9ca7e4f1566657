// Software and Appliance through every engine phase, played over gRPC against the REAL dynamic-provider host,
// which runs the provider text the resource classes register, against the reference server on 127.0.0.1.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { startStack, UNKNOWN, urnOf, type Props, type Stack } from '../support/pulumi-host';

let stack: Stack;
let client: Client;
const P = (type: 'Software' | 'Appliance') => stack.providerText[type];

beforeAll(async () => {
  stack = await startStack('npm');
  client = createClient({ url: stack.server.url, auth: { login: stack.user.login, publicKey: stack.user.publicKey, secretKey: stack.user.secretKey } });
  writeFileSync(join(stack.project.dir, 'app.tar'), 'application v1');
  writeFileSync(join(stack.project.dir, 'conf.ini'), '[main]\nport=8080\n');
});
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

/** What no state may carry in plain text: the provider's configured keys. */
function assertNoConfiguredCredential(props: Props): void {
  const text = JSON.stringify(props);
  expect(text).not.toContain(stack.user.secretKey);
  expect(text).not.toContain(stack.user.publicKey);
}

describe('Software', () => {
  const urn = urnOf('Software', 'app');
  let id = '';
  let state: Props = {};
  const inputs = () => ({
    __provider: P('Software'), name: 'app', version: '1.0', description: 'the app',
    files: [{ source: 'app.tar', destination: '/opt/app', rights: '0644' }, { source: 'conf.ini', destination: '/etc/app' }],
  });

  it('check: one clear failure per property, and unknowns accepted in preview', async () => {
    const bad = await stack.host.check(urn, {}, { __provider: P('Software'), version: 3, files: [{ source: 'missing.bin', rights: 'rw' }] });
    expect(bad.failures).toEqual(expect.arrayContaining([
      { property: 'name', reason: 'name is required' },
      { property: 'version', reason: 'version must be a string, not number 3' },
      { property: 'files[0].rights', reason: expect.stringContaining('octal') },
      { property: 'files[0].source', reason: expect.stringContaining('cannot read missing.bin: ENOENT') },
    ]));
    const preview = await stack.host.check(urn, {}, { __provider: P('Software'), name: UNKNOWN, version: '1', files: UNKNOWN });
    expect(preview.failures).toEqual([]);
    expect(preview.inputs.name).toBe(UNKNOWN);
    expect(preview.inputs.files).toBe(UNKNOWN);
  });

  it('create: four-stage upload, outputs uri and artifactUris', async () => {
    const checked = await stack.host.check(urn, {}, inputs());
    expect(checked.failures).toEqual([]);
    const r = await stack.host.create(urn, checked.inputs);
    id = r.id;
    state = r.properties;
    expect(id).toMatch(/^users\/alice\/mysoftware\/\d+$/);
    expect(state.uri).toBe(id);
    const artifactUris = state.artifactUris as string[];
    expect(artifactUris).toHaveLength(2);
    const msid = id.split('/').pop()!;
    const arts = await client.mySoftwareArtifact_getAll({ msid });
    expect(arts.softwareArtifacts!.map((a) => a.uri).sort()).toEqual([...artifactUris].sort());
    // The uploaded bytes are the file's bytes.
    const app = arts.softwareArtifacts!.find((a) => a.name === 'app.tar')!;
    expect(app.sha256sum).toBe((state.files as Props[])[0]!.sha256);
    expect(app.size).toBe('application v1'.length);
    assertNoConfiguredCredential(state);
  });

  it('create of an existing name and version fails with 409 advice; adopt takes it over', async () => {
    const checked = await stack.host.check(urnOf('Software', 'dup'), {}, inputs());
    await expect(stack.host.create(urnOf('Software', 'dup'), checked.inputs)).rejects.toThrow(/already exists.*adopt: true/);
    const adopted = await stack.host.create(urnOf('Software', 'dup'), { ...checked.inputs, adopt: true });
    expect(adopted.id).toBe(id);
    state = adopted.properties; // the adopter now owns the artifacts it uploaded
  });

  it('diff: nothing changed, a content change updates, a version change replaces', async () => {
    const same = await stack.host.check(urn, state, inputs());
    expect(await stack.host.diff(id, urn, state, same.inputs)).toEqual({ changes: 'none', replaces: [], deleteBeforeReplace: false });

    writeFileSync(join(stack.project.dir, 'app.tar'), 'application v2');
    const edited = await stack.host.check(urn, state, inputs());
    expect(await stack.host.diff(id, urn, state, edited.inputs)).toEqual({ changes: 'some', replaces: [], deleteBeforeReplace: false });

    const bumped = await stack.host.check(urn, state, { ...inputs(), version: '2.0' });
    expect(await stack.host.diff(id, urn, state, bumped.inputs)).toEqual({ changes: 'some', replaces: ['version'], deleteBeforeReplace: false });

    const unknownName = await stack.host.check(urn, state, { ...inputs(), name: UNKNOWN });
    expect((await stack.host.diff(id, urn, state, unknownName.inputs)).replaces).toEqual(['name']);
  });

  it('update: only the changed file is uploaded again', async () => {
    const edited = await stack.host.check(urn, state, inputs());
    const before = state.artifactUris as string[];
    const r = await stack.host.update(id, urn, state, edited.inputs);
    const after = r.properties.artifactUris as string[];
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).toBe(before[1]);
    const arts = await client.mySoftwareArtifact_getAll({ msid: id.split('/').pop()! });
    expect(arts.softwareArtifacts!.map((a) => a.uri).sort()).toEqual([...after].sort());
    expect(arts.softwareArtifacts!.find((a) => a.uri === after[0])!.size).toBe('application v2'.length);
    state = r.properties;
  });

  it('read: drift (an artifact deleted behind our back) shows in the next diff', async () => {
    const victim = (state.artifactUris as string[])[1]!;
    await client.mySoftwareArtifact_delete({ msid: id.split('/').pop()!, said: victim.split('/').pop()! });
    const r = await stack.host.read(id, urn, state);
    expect(r.id).toBe(id);
    expect(r.properties.artifactUris).toEqual([(state.artifactUris as string[])[0]]);
    const again = await stack.host.check(urn, r.properties, inputs());
    expect((await stack.host.diff(id, urn, r.properties, again.inputs)).changes).toBe('some');
    state = (await stack.host.update(id, urn, r.properties, again.inputs)).properties;
    expect(state.artifactUris).toHaveLength(2);
  });

  it('delete, then read says gone, and a second delete is tolerated', async () => {
    await stack.host.delete(id, urn, state);
    await expect(client.mySoftware_get({ msid: id.split('/').pop()! })).rejects.toMatchObject({ status: 404 });
    expect((await stack.host.read(id, urn, state)).id).toBe('');
    await stack.host.delete(id, urn, state);
  });
});

describe('Appliance', () => {
  const urn = urnOf('Appliance', 'web');
  let swUri = '';
  let id = '';
  let state: Props = {};
  const inputs = (over: Props = {}) => ({
    __provider: P('Appliance'), name: 'web', version: '1', description: 'a web server',
    distribution: { name: 'Debian', version: '12', arch: 'x86_64' },
    packages: ['curl'], software: [swUri], ...over,
  });

  beforeAll(async () => {
    const sw = await stack.host.check(urnOf('Software', 'tool'), {}, { __provider: P('Software'), name: 'tool', version: '1', files: [{ source: 'conf.ini' }] });
    swUri = (await stack.host.create(urnOf('Software', 'tool'), sw.inputs)).id;
  });

  it('check: failures per property; preview with an unknown software URI passes without calling the service', async () => {
    const bad = await stack.host.check(urn, {}, { __provider: P('Appliance'), name: 'web', distribution: 'debian', packages: [{}], software: ['x'] });
    expect(bad.failures.map((f) => f.property).sort()).toEqual(['distribution', 'packages[0].name', 'software[0].uri', 'version']);
    expect(bad.failures.find((f) => f.property === 'distribution')!.reason).toMatch(/distributions\/<id> or \{name, version, arch\}/);
    const preview = await stack.host.check(urn, {}, inputs({ software: [UNKNOWN] }));
    expect(preview.failures).toEqual([]);
    expect(preview.inputs.software).toEqual([UNKNOWN]);
    expect(preview.inputs.osProfile).toBe('Minimal');
  });

  it('create: distribution by name, Minimal profile, packages resolved, software attached', async () => {
    const checked = await stack.host.check(urn, {}, inputs());
    const r = await stack.host.create(urn, checked.inputs);
    id = r.id;
    state = r.properties;
    expect(id).toMatch(/^users\/alice\/appliances\/\d+$/);
    expect(state.distributionUri).toBe('distributions/1');
    const packageUris = state.packageUris as string[];
    expect(packageUris).toHaveLength(1);
    const aid = id.split('/').pop()!;
    const app = await client.appliance_get({ aid });
    expect(app.mySoftwareList!.map((s) => s.uri)).toEqual([swUri]);
    expect(state.revision).toBe(app.revision);
    const pkgs = await client.applianceOSProfilePkg_getAll({ aid, osid: (state.osProfileUri as string).split('/').pop()! });
    expect(pkgs.pkgs!.map((p) => p.uri)).toContain(packageUris[0]);
    expect(pkgs.pkgs!.find((p) => p.uri === packageUris[0])!.name).toBe('curl');
    assertNoConfiguredCredential(state);
  });

  it('diff: packages and software update in place; distribution replaces (delete first: same name and version); name replaces', async () => {
    const pk = await stack.host.check(urn, state, inputs({ packages: ['curl', 'nano'] }));
    expect(await stack.host.diff(id, urn, state, pk.inputs)).toEqual({ changes: 'some', replaces: [], deleteBeforeReplace: false });
    const sw = await stack.host.check(urn, state, inputs({ software: [UNKNOWN] }));
    expect(await stack.host.diff(id, urn, state, sw.inputs)).toEqual({ changes: 'some', replaces: [], deleteBeforeReplace: false });
    const dist = await stack.host.check(urn, state, inputs({ distribution: 'distributions/2' }));
    expect(await stack.host.diff(id, urn, state, dist.inputs)).toEqual({ changes: 'some', replaces: ['distribution'], deleteBeforeReplace: true });
    const renamed = await stack.host.check(urn, state, inputs({ name: 'web2' }));
    expect(await stack.host.diff(id, urn, state, renamed.inputs)).toEqual({ changes: 'some', replaces: ['name'], deleteBeforeReplace: false });
    const same = await stack.host.check(urn, state, inputs());
    expect((await stack.host.diff(id, urn, state, same.inputs)).changes).toBe('none');
  });

  it('update: packages swapped and software detached in place; the revision grows', async () => {
    const checked = await stack.host.check(urn, state, inputs({ packages: ['nano'], software: [], description: 'changed' }));
    const r = await stack.host.update(id, urn, state, checked.inputs);
    const aid = id.split('/').pop()!;
    const pkgs = await client.applianceOSProfilePkg_getAll({ aid, osid: (state.osProfileUri as string).split('/').pop()! });
    const names = pkgs.pkgs!.map((p) => p.name);
    expect(names).toContain('nano');
    expect(pkgs.pkgs!.some((p) => p.uri === (state.packageUris as string[])[0])).toBe(false);
    const app = await client.appliance_get({ aid });
    expect(app.mySoftwareList ?? []).toEqual([]);
    expect(app.description).toBe('changed');
    expect(r.properties.revision as number).toBeGreaterThan(state.revision as number);
    expect(r.properties.revision).toBe(app.revision);
    state = r.properties;
  });

  it('read: a package removed on the service and a description changed there show as drift', async () => {
    const aid = id.split('/').pop()!;
    const osid = (state.osProfileUri as string).split('/').pop()!;
    await client.applianceOSProfilePkg_updateAll({ aid, osid, body: { deletedPkgUris: state.packageUris as string[] } });
    const app = await client.appliance_get({ aid });
    await client.appliance_update({ aid, body: { ...app, description: 'edited by hand' } });
    const r = await stack.host.read(id, urn, state);
    expect(r.properties.packages).toEqual([]);
    expect(r.properties.description).toBe('edited by hand');
    const want = await stack.host.check(urn, r.properties, inputs({ packages: ['nano'], software: [], description: 'changed' }));
    expect(await stack.host.diff(id, urn, r.properties, want.inputs)).toEqual({ changes: 'some', replaces: [], deleteBeforeReplace: false });
    state = (await stack.host.update(id, urn, r.properties, want.inputs)).properties;
    expect(state.packageUris).toHaveLength(1);
  });

  it('adopt takes over an existing appliance instead of a 409', async () => {
    const checked = await stack.host.check(urnOf('Appliance', 'again'), {}, inputs({ packages: ['nano'], software: [] }));
    await expect(stack.host.create(urnOf('Appliance', 'again'), checked.inputs)).rejects.toThrow(/appliance web 1 already exists/);
    const adopted = await stack.host.create(urnOf('Appliance', 'again'), { ...checked.inputs, adopt: true });
    expect(adopted.id).toBe(id);
    expect(adopted.properties.osProfileUri).toBe(state.osProfileUri);
  });

  it('adopt with another base profile replaces the OS profile, as apply does, and adds the packages to the new one', async () => {
    const checked = await stack.host.check(urnOf('Appliance', 'again'), {}, inputs({ packages: ['nano'], software: [], osProfile: 'Standard', adopt: true }));
    const adopted = await stack.host.create(urnOf('Appliance', 'again'), checked.inputs);
    expect(adopted.id).toBe(id);
    const profileUri = adopted.properties.osProfileUri as string;
    expect(profileUri).not.toBe(state.osProfileUri);
    const aid = id.split('/').pop()!;
    const osid = profileUri.split('/').pop()!;
    const bases = await client.osTemplate_getAll({ id: 1 });
    const standard = bases.distribProfiles!.find((b) => b.name === 'Standard')!;
    expect((await client.applianceOSProfile_get({ aid, osid })).standardProfileUri).toBe(standard.uri);
    expect((await client.applianceOSProfilePkg_getAll({ aid, osid })).pkgs!.map((p) => p.name)).toContain('nano');
    expect((await client.appliance_get({ aid })).osProfileUri).toBe(profileUri);
    state = adopted.properties;
  });

  it('delete; read after delete removes it from state; delete again is tolerated', async () => {
    await stack.host.delete(id, urn, state);
    expect((await stack.host.read(id, urn, state)).id).toBe('');
    await stack.host.delete(id, urn, state);
  });
});

describe('connection input', () => {
  it('a per-resource connection overrides the configuration; a changed key updates, another endpoint replaces', async () => {
    const urn = urnOf('Software', 'viaconn');
    const connection = { url: stack.server.url, user: 'alice', apiKey: stack.user.publicKey, secretKey: stack.user.secretKey };
    const checked = await stack.host.check(urn, {}, { __provider: P('Software'), name: 'conn', version: '1', connection });
    expect(checked.failures).toEqual([]);
    const r = await stack.host.create(urn, checked.inputs);
    expect(r.id).toMatch(/^users\/alice\/mysoftware\//);
    const rekeyed = await stack.host.check(urn, r.properties, { __provider: P('Software'), name: 'conn', version: '1', connection: { ...connection, secretKey: 'rotated' } });
    expect(await stack.host.diff(r.id, urn, r.properties, rekeyed.inputs)).toEqual({ changes: 'some', replaces: [], deleteBeforeReplace: false });
    const moved = await stack.host.check(urn, r.properties, { __provider: P('Software'), name: 'conn', version: '1', connection: { ...connection, url: 'http://127.0.0.1:1/api' } });
    expect((await stack.host.diff(r.id, urn, r.properties, moved.inputs)).replaces).toEqual(['connection']);
    // A bad secret key in the connection is used (and refused by the service), not the configured one.
    await expect(stack.host.read(r.id, urn, { ...r.properties, connection: { ...connection, secretKey: 'wrong' } })).rejects.toThrow(/401/);
    await stack.host.delete(r.id, urn, r.properties);
    const bad = await stack.host.check(urn, {}, { __provider: P('Software'), name: 'c', version: '1', connection: { url: 'ftp://x', user: 'a', apiKey: 'k' } });
    expect(bad.failures.map((f) => f.property).sort()).toEqual(['connection.secretKey', 'connection.url']);
  });
});
