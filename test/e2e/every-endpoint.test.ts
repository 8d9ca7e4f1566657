// End to end: the CLIENT LIBRARY drives every operation of the table (src/model/operations.ts, 76
// rows) against the running reference server over real HTTP on 127.0.0.1, and the last test proves
// it twice: the operation ids called through the client (a recording wrapper) and the operations the
// server answered (observed on its HTTP server) both equal the whole table.
//
// Covered on the way: the spec's four-stage software flow (rule 4), an OS profile from a listed base
// profile and package changes found by FIQL (rules 2–3), a small QCOW2 generated to completion and
// downloaded as a stream (sha256 = the record's sha256sum), publication to the real loopback Glance
// (cloudId; DELETE removes the Glance image), cancel of both kinds of job, every error status as a
// typed error (or, for 304, as a cache hit), XML and JSON, API key and Basic, an administrator.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError, createClient, fiql, JobCancelledError, type Client, type ClientOptions } from '../../src/index';
import type { CredAccount, Image, OpStatus, PublishImage } from '../../src/model/resources';
import type { OperationId } from '../../src/model/operations';
import { pipeline } from '../../src/client/pipeline';
import { retryPolicy } from '../../src/client/retry';
import { createTransport } from '../../src/client/transport';
import type { CreatedUser, RunningServer } from '../../src/server/index';
import { startReferenceServer, type ReferenceServer } from '../support/reference-server';
import { XSD } from '../support/shared';
import { orderedSteps } from '../support/steps';
import { ALL_OPERATION_IDS, apiError, glanceImage, glanceImagesNamed, observe, openStack, recording, sha256File, type Answered } from './support';

const os = openStack();
if ('skip' in os) {
  console.warn(`[e2e] the Glance part of the publication test is skipped: ${os.skip}. ` + 'Publications still run against an unreachable Keystone on 127.0.0.1, so every publication operation is exercised.');
}
const glance = 'env' in os ? os.env : undefined;

const LIMITS = { bodyBytes: 256 * 1024, uploadBytes: 1024 * 1024 };
const JOB_WAIT = { timeoutMs: 900_000, pollMs: 50, maxPollMs: 1000 } as const;

let ref: ReferenceServer<'root' | 'alice' | 'bob'>;
let server: RunningServer;
let base: string;
let answered: Answered[];
const called = new Set<OperationId>();
const opened: Client[] = [];
let users: { root: CreatedUser; alice: CreatedUser; bob: CreatedUser };

/** A client of the library, wrapped so that every operation id called through it is recorded. */
function client(auth: ClientOptions['auth'], o: Partial<ClientOptions> = {}): Client {
  const c = createClient({ url: server.url, auth, retry: false, ...o });
  opened.push(c);
  return recording(c, called);
}
const keyOf = (u: CreatedUser) => ({ login: u.login, publicKey: u.publicKey, secretKey: u.secretKey });

let alice: Client; // API key, XML
let aliceJson: Client; // API key, JSON
let aliceBasic: Client; // Basic, XML
let aliceBasicJson: Client; // Basic, JSON
let admin: Client; // administrator, API key
let bob: Client; // another user

// Shared between the steps (they run in order). A step that needs a value an earlier step failed to make is
// skipped with the reason (test/support/steps.ts), so one failure does not fail every later step.
const steps = orderedSteps();
let aid: number; // the main template
let applianceUri: string;
let msid: number;
let said: number;
let toolBytes: Buffer;
let accountUri: string;
let qcow2: Image;

beforeAll(async () => {
  ref = await startReferenceServer(
    { root: { password: 'root-Pass-1', admin: true }, alice: { password: 'alice-Pass-1' }, bob: {} },
    { limits: LIMITS, prefix: 'forge-e2e-' },
  );
  users = ref.users;
  server = ref.server;
  expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
  base = server.url;
  answered = observe(server);
  alice = client(keyOf(users.alice));
  aliceJson = client(keyOf(users.alice), { format: 'json' });
  aliceBasic = client({ login: 'alice', password: 'alice-Pass-1' });
  aliceBasicJson = client({ login: 'alice', password: 'alice-Pass-1' }, { format: 'json' });
  admin = client(keyOf(users.root));
  bob = client(keyOf(users.bob));
});

afterAll(async () => {
  for (const c of opened) await c.close().catch(() => undefined);
  await ref?.close();
});

/** A Writable that hashes what it receives. */
function hashingSink(): { sink: Writable; digest: () => string; bytes: () => number } {
  const h = createHash('sha256');
  let n = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      h.update(chunk);
      n += chunk.length;
      done();
    },
  });
  return { sink, digest: () => h.digest('hex'), bytes: () => n };
}

/** A loopback TCP listener that accepts connections and never answers. */
async function silentListener(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const srv = createNetServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        srv.close(() => r());
      }),
  };
}

async function withProfile(c: Client, name: string, profile: 'Minimal' | 'Standard' = 'Minimal'): Promise<number> {
  const a = await c.appliance_create({ body: { name, version: '1', distributionUri: 'distributions/1', installProfile: { diskSize: 1024, memorySize: 512 } } });
  const base = (await c.osTemplate_getAll({ id: 1 })).distribProfiles!.find((p) => p.name === profile)!;
  await c.applianceOSProfile_create({ aid: a.dbId!, body: { kind: 'LinuxProfile', name: base.name!, standardProfileUri: base.uri! } });
  return a.dbId!;
}

describe('every endpoint through the client library, against the reference server on 127.0.0.1', () => {
  it('service status and the catalog, in XML and JSON, searched with FIQL; catalog writes are 403 even for an admin', async () => {
    const st = await alice.uforgeStatus_get();
    expect(st.alive).toBe(true);
    expect(st.version).toBeTruthy();

    const q = fiql.and(fiql.eq('name', 'Debian'), fiql.eq('version', '12'));
    const x = await alice.os_getAll({ params: { query: q } });
    const j = await aliceJson.os_getAll({ params: { query: q } });
    expect(x).toEqual(j);
    expect(x.total).toBe(1);
    expect(x.distributions![0]).toMatchObject({ dbId: 1, name: 'Debian', version: '12', arch: 'x86_64' });
    const deb = await aliceBasicJson.os_get({ id: 1 });
    expect(deb).toEqual(await alice.os_get({ id: 1 }));
    const osUpdate = await apiError(admin.os_update({ id: 1, body: { ...deb, description: 'changed' } }), 403, base);
    expect(osUpdate.requestMethod).toBe('PUT');

    const profiles = await aliceJson.osTemplate_getAll({ id: 1, params: { orderBy: 'name' } });
    expect(profiles.distribProfiles!.map((p) => p.name)).toEqual(['Minimal', 'Standard']);
    const minimal = profiles.distribProfiles![0]!;
    expect(await alice.osTemplate_get({ id: 1, prid: minimal.dbId! })).toMatchObject({ name: 'Minimal', uri: minimal.uri });
    const basePkgs = await alice.osTemplatePkgs_get({ id: 1, prid: minimal.dbId! });
    expect(basePkgs.pkgs!.length).toBeGreaterThan(0);
    await apiError(admin.osTemplate_create({ id: 1, params: { basedOn: minimal.dbId! }, body: { kind: 'LinuxProfile', name: 'mine' } }), 403, base);
    await apiError(admin.osTemplate_update({ id: 1, prid: minimal.dbId!, body: { kind: 'LinuxProfile', description: 'x' } }), 403, base);
    await apiError(admin.osTemplate_delete({ id: 1, prid: minimal.dbId! }), 403, base);

    const curl = await alice.osPkg_getAll({ id: 1, params: { query: fiql.and(fiql.eq('name', 'curl'), fiql.eq('arch', 'amd64')), count: 5 } });
    expect(curl.pkgs!.map((p) => p.name)).toEqual(['curl']);
    const wild = await aliceJson.osPkg_getAll({ id: 1, params: { query: fiql.eq('name', 'libcurl*'), orderBy: 'name', count: 3, latestOnly: true } });
    expect(wild.pkgs!.length).toBeGreaterThan(0);
    expect(wild.pkgs!.every((p) => p.name!.startsWith('libcurl'))).toBe(true);
    expect(await aliceJson.osPkg_get({ id: 1, pid: curl.pkgs![0]!.dbId! })).toMatchObject({ name: 'curl', uri: curl.pkgs![0]!.uri });

    const orgs = await alice.org_getAll();
    expect(orgs.orgs!.map((o) => o.uri)).toEqual(['orgs/1']);
    expect((await aliceJson.org_get({ oid: 1 })).defaultOrg).toBe(true);
    await apiError(admin.org_create({ params: { autoActivate: true }, body: { name: 'second' } }), 403, base);

    const formats = await alice.userTargetFormat_getAll({ params: { query: fiql.eq('name', '*QCOW2'), orderBy: 'name' } });
    expect(formats.targetFormats!.map((f) => [f.name, f.credAccountType ?? null])).toEqual([
      ['OpenStack QCOW2', 'openstack'],
      ['QCOW2', null],
    ]);
    await apiError(admin.userTargetFormat_update({ body: { targetFormats: formats.targetFormats! } }), 403, base);
  });

  it('users and API keys: both auth schemes, an admin reads another user, a new key signs, a deleted key is a 401 with WWW-Authenticate', async () => {
    const byKey = await alice.user_get();
    const byBasic = await aliceBasic.user_get();
    expect([byKey.loginName, byBasic.loginName]).toEqual(['alice', 'alice']);
    const updated = await aliceBasicJson.user_update({ body: { firstName: 'Alice', surname: 'Liddell' } });
    expect([updated.firstName, updated.surname]).toEqual(['Alice', 'Liddell']);
    expect((await alice.user_get()).firstName).toBe('Alice');
    expect((await admin.user_get({ uid: 'alice' })).loginName).toBe('alice');
    await apiError(bob.user_get({ uid: 'alice' }), 403, base);

    // A new key pair needs the current password (Basic), not a replayable signed URL.
    const k = await aliceBasicJson.apiKey_create({ body: { name: 'e2e', description: 'made by the e2e suite' } });
    expect(k.secretKey).toBeTruthy();
    const withNewKey = client({ login: 'alice', publicKey: k.publicKey!, secretKey: k.secretKey! });
    expect((await withNewKey.user_get()).loginName).toBe('alice');
    const keys = await alice.apiKey_getAll();
    expect(keys.apiKeyPairs!.map((p) => p.publicKey)).toContain(k.publicKey);
    expect(keys.apiKeyPairs!.every((p) => p.secretKey === undefined)).toBe(true);
    expect((await alice.apiKey_update({ akid: k.dbId!, body: { description: 'renamed' } })).description).toBe('renamed');
    await alice.apiKey_delete({ akid: k.dbId! });
    const gone = await apiError(withNewKey.user_get(), 401, base);
    expect(gone.headers['www-authenticate']).toMatch(/^Basic realm="[^"]+"$/);
    const badPw = await apiError(client({ login: 'alice', password: 'not-her-password' }, { format: 'json' }).user_get(), 401, base);
    expect(badPw.headers['www-authenticate']).toMatch(/^Basic realm=/);
    expect(`${badPw.message} ${JSON.stringify(badPw.body)}`).not.toContain('not-her-password');
  });

  it('cloud accounts: create, search, read (password write-only), update, 409 on a duplicate name, delete', async () => {
    const keystoneUrl = glance?.keystoneUrl ?? 'http://127.0.0.1:9/v3';
    const body: CredAccount = {
      kind: 'CredAccountOpenStack',
      name: 'loopback',
      targetPlatform: { name: 'OpenStack', type: 'openstack' },
      keystoneUrl,
      ...(glance?.glanceUrl ? { glanceUrl: glance.glanceUrl } : {}),
      login: glance?.username ?? 'nobody',
      password: glance?.password ?? 'unused-password',
      keystoneVersion: 'v3',
    };
    const sent = await alice.send('cloudAccount_create', { body });
    expect(sent.status).toBe(201);
    expect(sent.headers.location).toBe(`${base}/${sent.value.uri}`);
    accountUri = sent.value.uri!;
    expect(sent.value.secretsMissing).toBe(true);
    expect(JSON.stringify(sent.value)).not.toContain(body.password!);
    await apiError(aliceJson.cloudAccount_create({ body: { ...body, name: 'LOOPBACK' } }), 409, base);

    const spare = await aliceJson.cloudAccount_create({ body: { ...body, name: 'spare' } });
    const found = await alice.cloudAccount_getAll({ params: { query: fiql.eq('name', 'spa*') } });
    expect(found.credAccounts!.map((a) => a.uri)).toEqual([spare.uri]);
    const got = await aliceJson.cloudAccount_get({ caid: spare.dbId! });
    expect(got).toMatchObject({ kind: 'CredAccountOpenStack', name: 'spare', keystoneUrl, secretsMissing: true });
    expect(got.password).toBeUndefined();
    expect((await alice.cloudAccount_update({ caid: spare.dbId!, body: { kind: 'CredAccountOpenStack', name: 'spare-2' } })).name).toBe('spare-2');
    await alice.cloudAccount_delete({ caid: spare.dbId! });
    await apiError(alice.cloudAccount_get({ caid: spare.dbId! }), 404, base);
  });

  it('software in the spec’s four stages: component → softwareFile artifact → upload of a real file → template update with mySoftwareList', async () => {
    const app = await alice.send('appliance_create', {
      body: { name: 'e2e-web', version: '1', description: 'end to end', distributionUri: 'distributions/1', installProfile: { diskSize: 1024, memorySize: 512 } },
    });
    expect(app.status).toBe(201);
    aid = app.value.dbId!;
    applianceUri = app.value.uri!;
    expect(applianceUri).toBe(`users/alice/appliances/${aid}`);
    await apiError(aliceJson.appliance_create({ body: { name: 'e2e-web', version: '1', distributionUri: 'distributions/1' } }), 409, base);
    const q = fiql.and(fiql.eq('name', 'e2e-*'), fiql.eq('version', '1'));
    const found = await alice.appliance_getAll({ params: { query: q, orderBy: 'name', count: 10, offset: 0 } });
    expect([found.total, found.appliances!.map((a) => a.uri)]).toEqual([1, [applianceUri]]);
    expect(await aliceJson.appliance_getAll({ params: { query: q } })).toEqual(found);

    // (a) the component, keeping artifactsUri
    const sw = await alice.mySoftware_create({ body: { name: 'e2e-tool', version: '1.0', description: 'a tool' } });
    msid = sw.dbId!;
    expect(sw.artifactsUri).toBe(`users/alice/mysoftware/${msid}/artifacts`);
    // (b) a softwareFile under it, keeping binaryUri
    const art = await alice.mySoftwareArtifact_add({ msid, body: { kind: 'SoftwareFile', name: 'tool.sh', installLocation: '/opt/e2e', rights: '0755' } });
    said = art.dbId!;
    expect(art.binaryUri).toBe(`${sw.artifactsUri}/${said}/bin`);
    expect(art.uploaded).toBe(false);
    // (c) a real file to the binary path
    const file = join(ref.dataDir, 'tool.sh');
    toolBytes = Buffer.concat([Buffer.from('#!/bin/sh\necho "hello from e2e"\n'), Buffer.alloc(200 * 1024, 'x')]);
    writeFileSync(file, toolBytes);
    const progress: number[] = [];
    const up = await alice.upload({ msid, said, fileName: 'tool.sh' }, { file }, { onProgress: (p) => progress.push(p.bytesLoaded) });
    expect(progress.at(-1)).toBe(toolBytes.length);
    expect(up).toMatchObject({ uploaded: true, size: toolBytes.length, sha256sum: createHash('sha256').update(toolBytes).digest('hex'), md5sum: createHash('md5').update(toolBytes).digest('hex') });
    // (d) the template carries the component
    const before = await alice.appliance_get({ aid });
    const updated = await alice.appliance_update({ aid, body: { uri: applianceUri, mySoftwareList: [{ name: 'e2e-tool', version: '1.0', uri: sw.uri! }] } });
    expect(updated.mySoftwareList!.map((m) => m.uri)).toEqual([sw.uri]);
    expect(updated.revision).toBe(before.revision! + 1);
    expect((await aliceJson.mySoftware_get({ msid })).applianceUris).toEqual([applianceUri]);

    // The file comes back byte for byte, by name (to a path) and without (to a stream, JSON client).
    const back = join(ref.dataDir, 'tool.back');
    expect(await alice.mySoftwareArtifact_downloadFile({ msid, said, fileName: 'tool.sh', to: back })).toEqual({ size: toolBytes.length, path: back });
    expect(readFileSync(back).equals(toolBytes)).toBe(true);
    const h = hashingSink();
    await aliceJson.mySoftwareArtifact_download({ msid, said, to: h.sink });
    expect([h.bytes(), h.digest()]).toEqual([toolBytes.length, up.sha256sum]);

    // Reads and edits of the library, XML and JSON.
    const list = await alice.mySoftware_getAll({ params: { query: fiql.eq('name', 'e2e-*'), distribId: 1 } });
    expect(list.mySoftwareList!.map((s) => s.uri)).toEqual([sw.uri]);
    expect(await aliceJson.mySoftware_getAll({ params: { query: fiql.eq('name', 'e2e-*') } })).toEqual(list);
    expect((await alice.mySoftware_update({ msid, body: { description: 'a better tool' } })).description).toBe('a better tool');
    const arts = await aliceJson.mySoftwareArtifact_getAll({ msid, params: { filename: 'tool.sh' } });
    expect(arts.softwareArtifacts!.map((a) => a.dbId)).toEqual([said]);
    const cur = await alice.send('mySoftwareArtifact_get', { msid, said });
    expect(cur.value.installLocation).toBe('/opt/e2e');
    await apiError(alice.mySoftwareArtifact_update({ msid, said, ifMatch: '"stale"', body: { kind: 'SoftwareFile', rights: '0750' } }), 412, base);
    const edited = await alice.mySoftwareArtifact_update({ msid, said, ifMatch: cur.headers.etag!, body: { kind: 'SoftwareFile', rights: '0750' } });
    expect(edited.rights).toBe('0750');
    const all = await aliceJson.mySoftwareArtifact_updateAll({ msid, params: { recursive: false }, body: { softwareArtifacts: [{ kind: 'SoftwareFile', dbId: said, ownerGroup: 'root:root' }] } });
    expect(all.softwareArtifacts!.map((a) => [a.dbId, a.ownerGroup])).toEqual([[said, 'root:root']]);
    // In use by a template: the component cannot go (documented 409).
    await apiError(alice.mySoftware_delete({ msid }), 409, base);
  });

  it('a second component: 413 on an upload over the limit, then its artifacts and itself are deleted', async () => {
    const sw = await aliceJson.mySoftware_create({ body: { name: 'e2e-scratch', version: '1' } });
    const a1 = await aliceJson.mySoftwareArtifact_add({ msid: sw.dbId!, body: { kind: 'SoftwareFile', name: 'big.bin' } });
    const a2 = await aliceJson.mySoftwareArtifact_add({ msid: sw.dbId!, body: { kind: 'SoftwareFile', name: 'small.bin' } });
    const a3 = await aliceJson.mySoftwareArtifact_add({ msid: sw.dbId!, body: { kind: 'SoftwareFile', name: 'other.bin' } });
    const size = LIMITS.uploadBytes + 512 * 1024;
    await apiError(alice.upload({ msid: sw.dbId!, said: a1.dbId!, fileName: 'big.bin' }, { open: () => Readable.from([Buffer.alloc(size, 1)]), size }), 413, base);
    expect((await alice.mySoftwareArtifact_get({ msid: sw.dbId!, said: a1.dbId! })).uploaded).toBe(false);
    // The same upload operation through send(), from a stream factory.
    const small = await alice.send('mySoftwareArtifact_upload', { msid: sw.dbId!, said: a2.dbId!, fileName: 'small.bin', body: { open: () => Readable.from([Buffer.from('small')]), size: 5 } });
    expect([small.status, small.value.size]).toEqual([200, 5]);
    await alice.mySoftwareArtifact_delete({ msid: sw.dbId!, said: a1.dbId! });
    await apiError(alice.mySoftwareArtifact_get({ msid: sw.dbId!, said: a1.dbId! }), 404, base);
    await aliceJson.mySoftwareArtifact_deleteAll({ msid: sw.dbId! });
    expect((await alice.mySoftwareArtifact_getAll({ msid: sw.dbId! })).total).toBe(0);
    await apiError(aliceJson.mySoftwareArtifact_get({ msid: sw.dbId!, said: a3.dbId! }), 404, base);
    await alice.mySoftware_delete({ msid: sw.dbId! });
    await apiError(alice.mySoftware_get({ msid: sw.dbId! }), 404, base);
  });

  it('OS profile from the listed base profiles, then package changes found by FIQL search', async (ctx) => {
    steps.needs(ctx, { aid, applianceUri });
    const bases = await alice.osTemplate_getAll({ id: 1 });
    const minimal = bases.distribProfiles!.find((p) => p.name === 'Minimal')!;
    const created = await alice.send('applianceOSProfile_create', { aid, body: { kind: 'LinuxProfile', name: minimal.name!, standardProfileUri: minimal.uri! } });
    expect(created.status).toBe(201);
    const osid = created.value.dbId!;
    expect(created.value.standardProfileUri).toBe(minimal.uri);
    await apiError(alice.applianceOSProfile_create({ aid, body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: minimal.uri! } }), 409, base);
    const prof = await aliceJson.applianceOSProfile_get({ aid, osid });
    expect(prof).toMatchObject({ kind: 'LinuxProfile', name: 'Minimal', applianceUri });
    const start = await alice.applianceOSProfilePkg_getAll({ aid, osid });
    const basePkgs = await alice.osTemplatePkgs_get({ id: 1, prid: minimal.dbId! });
    expect(start.pkgs!.map((p) => p.dbId).sort()).toEqual(basePkgs.pkgs!.map((p) => p.dbId).sort());

    const found = await alice.osPkg_getAll({ id: 1, params: { query: fiql.or(fiql.eq('name', 'curl'), fiql.eq('name', 'jq')), latestOnly: true } });
    expect(found.pkgs!.map((p) => p.name).sort()).toEqual(['curl', 'jq']);
    const victim = start.pkgs!.find((p) => p.name !== 'curl' && p.name !== 'jq')!;
    const changed = await aliceJson.applianceOSProfilePkg_updateAll({ aid, osid, body: { addedPkgUris: found.pkgs!.map((p) => p.uri!), deletedPkgUris: [victim.uri!] } });
    const names = changed.pkgs!.map((p) => p.name);
    expect(names).toContain('curl');
    expect(names).toContain('jq');
    expect(changed.pkgs!.some((p) => p.dbId === victim.dbId)).toBe(false);
    await apiError(alice.applianceOSProfilePkg_updateAll({ aid, osid, body: { addedPkgUris: ['distributions/1/pkgs/999999999'] } }), 400, base);
    expect((await alice.appliance_get({ aid })).osProfileUri).toBe(prof.uri);

    // A second template takes the other base profile, then loses it again.
    const other = await aliceJson.appliance_create({ body: { name: 'e2e-profile', version: '1', distributionUri: 'distributions/1' } });
    const standard = bases.distribProfiles!.find((p) => p.name === 'Standard')!;
    const p2 = await aliceJson.applianceOSProfile_create({ aid: other.dbId!, body: { kind: 'LinuxProfile', name: 'Standard', standardProfileUri: standard.uri! } });
    await alice.applianceOSProfile_delete({ aid: other.dbId!, osid: p2.dbId! });
    await apiError(alice.applianceOSProfile_get({ aid: other.dbId!, osid: p2.dbId! }), 404, base);
    expect((await alice.appliance_get({ aid: other.dbId! })).osProfileUri).toBeUndefined();
    await aliceJson.appliance_delete({ aid: other.dbId!, params: { force: true } });
  });

  it('a small QCOW2 is generated to completion and downloaded as a stream whose sha256 is the record’s sha256sum', async (ctx) => {
    steps.needs(ctx, { aid });
    const gen = await alice.send('machineImage_generate', { aid, body: { targetFormat: { name: 'QCOW2' }, compress: false, installProfile: { diskSize: 1024 } } });
    expect(gen.status).toBe(201);
    expect(gen.headers.location).toBe(`${base}/${gen.value.uri}`);
    const seen: OpStatus[] = [];
    const done = await alice.waitForJob(gen.value, { ...JOB_WAIT, onProgress: (s) => seen.push(s) });
    expect([done.complete, done.error, done.cancelled]).toEqual([true, false, false]);
    const pct = seen.map((s) => s.percentage ?? 0);
    expect(pct.every((p, i) => i === 0 || p >= pct[i - 1]!)).toBe(true);

    const itid = gen.value.dbId!;
    qcow2 = await alice.machineImage_get({ aid, itid });
    expect(qcow2).toMatchObject({ imageCreated: true, targetFormat: { name: 'QCOW2' }, installProfile: { diskSize: 1024 } });
    expect(qcow2.sha256sum).toMatch(/^[0-9a-f]{64}$/);
    expect(qcow2.downloadUri).toBe(`${qcow2.uri}/downloads/${encodeURIComponent(qcow2.fileName!)}`);

    const path = join(ref.dataDir, 'image.qcow2');
    const byName = await alice.machineImage_downloadFile({ aid, itid, fileName: qcow2.fileName!, to: path });
    expect(byName.size).toBe(qcow2.fileSize);
    expect(await sha256File(path)).toBe(qcow2.sha256sum);
    expect(readFileSync(path).subarray(0, 4).toString('latin1')).toBe('QFI\xfb'); // a real qcow2 header
    const h = hashingSink();
    await aliceJson.machineImage_download({ aid, itid, params: { downloadId: 'e2e' }, to: h.sink });
    expect([h.bytes(), h.digest()]).toEqual([qcow2.fileSize, qcow2.sha256sum]);
    const h2 = hashingSink();
    await aliceBasic.download(qcow2.downloadUri!, { to: h2.sink });
    expect(h2.digest()).toBe(qcow2.sha256sum);
    // The server's extension: the image's SBOM, by the client's operation of the same table.
    const sbom = hashingSink();
    await alice.machineImageSbom_download({ aid, itid, format: 'spdx', to: sbom.sink });
    expect(sbom.bytes()).toBeGreaterThan(0);

    // Lists and statuses, XML and JSON.
    const imgs = await alice.machineImage_getAll({ aid, params: { query: fiql.eq('targetFormat.name', 'QCOW2') } });
    expect(imgs.images!.map((i) => i.uri)).toEqual([qcow2.uri]);
    expect((await aliceJson.machineImageStatus_get({ aid, itid })).complete).toBe(true);
    const sts = await alice.machineImageStatus_getAll({ aid });
    expect(sts.statuses!.map((s) => s.parentUri)).toEqual([qcow2.uri]);
    expect((await aliceJson.userMachineImage_getAll({ params: { img: 'e2e' } })).images!.map((i) => i.uri)).toContain(qcow2.uri);
    expect((await alice.userMachineImageStatus_get()).statuses!.every((s) => s.complete === true)).toBe(true);
    // An administrator reads it too.
    expect((await admin.machineImage_get({ uid: 'alice', aid, itid })).sha256sum).toBe(qcow2.sha256sum);
  });

  it('generation cancel: by the cancel operation, and by an AbortSignal given to waitForJob (which cancels on the service)', async (ctx) => {
    steps.needs(ctx, { aid });
    const cid = await withProfile(alice, 'e2e-cancel');
    const body: Image = { targetFormat: { name: 'Raw Virtual Disk' }, installProfile: { diskSize: 1024 } };
    const img = await alice.machineImage_generate({ aid: cid, body });
    // While it runs, a second generation of the same template and format is a conflict.
    await apiError(aliceJson.machineImage_generate({ aid: cid, body }), 409, base);
    const st = await alice.machineImageGeneration_cancel({ aid: cid, itid: img.dbId! });
    expect(st.cancelled).toBe(true);
    await expect(alice.waitForJob(img, JOB_WAIT)).rejects.toBeInstanceOf(JobCancelledError);

    // Regenerate the cancelled image, then abort the wait at its first running status.
    const again = await alice.send('machineImage_regenerate', { aid: cid, itid: img.dbId!, params: { force: true } });
    expect(again.status).toBe(200);
    expect(again.value.status?.complete).toBe(false);
    const ac = new AbortController();
    const waited = alice.waitForJob(again.value, {
      ...JOB_WAIT,
      signal: ac.signal,
      onProgress: (s) => {
        if (!s.complete && !s.error && !s.cancelled) ac.abort();
      },
    });
    const e = await waited.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AbortedError);
    expect((e as Error).message).toMatch(/generation cancelled/);
    const after = await aliceJson.machineImageStatus_get({ aid: cid, itid: img.dbId! });
    expect([after.cancelled, after.complete]).toEqual([true, false]);

    await alice.machineImage_delete({ aid: cid, itid: img.dbId! });
    await apiError(alice.machineImage_get({ aid: cid, itid: img.dbId! }), 404, base);
    await alice.appliance_delete({ aid: cid });
  });

  it(`publication${glance ? ' to the real Glance' : ' (Glance skipped: an unreachable Keystone)'}: cloudId, statuses, cancel, and the Glance image deleted with the publication`, async (ctx) => {
    steps.needs(ctx, { aid, accountUri, qcow2 });
    const gen = await alice.machineImage_generate({ aid, body: { targetFormat: { name: 'OpenStack QCOW2' }, installProfile: { diskSize: 1024 } } });
    await alice.waitForJob(gen, JOB_WAIT);
    const itid = gen.dbId!;
    // A format without a cloud cannot be published (400).
    await apiError(
      alice.applianceImage_publish({ aid, itid: qcow2.dbId!, body: { kind: 'PublishImageOpenStack', credAccount: { kind: 'CredAccountOpenStack', uri: accountUri }, keystoneProject: 'p' } }),
      400,
      base,
    );

    const project = glance?.project ?? 'nowhere';
    const domain = glance?.domain ?? 'Default';
    const name = `forge-e2e-${process.pid}-${Date.now()}`;
    const sent = await alice.send('machineImage_publish', {
      aid,
      body: { kind: 'PublishImageOpenStack', imageUri: gen.uri!, credAccount: { kind: 'CredAccountOpenStack', uri: accountUri }, keystoneDomain: domain, keystoneProject: project, displayName: name, publicImage: false },
    });
    expect(sent.status).toBe(201);
    const pub = sent.value;
    const pitid = pub.dbId!;
    if (glance) {
      const final = await alice.waitForJob(pub, JOB_WAIT);
      expect([final.published, final.complete, final.error]).toEqual([true, true, false]);
    } else {
      await expect(alice.waitForJob(pub, JOB_WAIT)).rejects.toMatchObject({ code: 'E_JOB_FAILED' });
    }
    const rec = await aliceJson.machineImagePublished_get({ aid, itid, pitid });
    expect(rec).toMatchObject({ kind: 'PublishImageOpenStack', imageUri: gen.uri, displayName: name, keystoneProject: project });
    expect(JSON.stringify(rec)).not.toContain(glance?.password ?? 'unused-password');
    const pst = await alice.machineImagePublishedStatus_get({ aid, itid, pitid });
    expect(pst.parentUri).toBe(rec.uri);
    expect((await alice.machineImagePublished_getAll({ aid })).publishImages!.map((p) => p.uri)).toEqual([rec.uri]);
    expect((await aliceJson.userMachineImagePublished_getAll({ params: { img: 'e2e' } })).publishImages!.map((p) => p.uri)).toEqual([rec.uri]);
    expect((await alice.userMachineImagePublishedStatus_getAll()).statuses!.map((s) => s.parentUri)).toEqual([rec.uri]);
    if (glance) {
      expect(rec.cloudId).toMatch(/^[0-9a-f-]{36}$/);
      expect(await glanceImage(glance, rec.cloudId!)).toEqual({ http: 200, status: 'active' });
    }
    await alice.machineImagePublished_delete({ aid, itid, pitid });
    await apiError(alice.machineImagePublished_get({ aid, itid, pitid }), 404, base);
    if (glance) {
      expect((await glanceImage(glance, rec.cloudId!)).http).toBe(404);
      expect(await glanceImagesNamed(glance, name)).toEqual([]);
    }

    // Publication cancel: an embedded account (password in the request), cancelled at once.
    const name2 = `${name}-cancel`;
    // Without the real services, a loopback listener that accepts and never answers keeps the job running until cancelled.
    const silent = glance ? undefined : await silentListener();
    const pub2: PublishImage = await aliceJson.applianceImage_publish({
      aid,
      itid,
      body: {
        kind: 'PublishImageOpenStack',
        credAccount: { kind: 'CredAccountOpenStack', keystoneUrl: glance?.keystoneUrl ?? `http://127.0.0.1:${silent!.port}/v3`, login: glance?.username ?? 'nobody', password: glance?.password ?? 'unused-password' },
        keystoneDomain: domain,
        keystoneProject: project,
        displayName: name2,
      },
    });
    try {
      const cst = await alice.machineImagePublish_cancel({ aid, itid, pitid: pub2.dbId! });
      expect(cst.cancelled).toBe(true);
      await expect(alice.waitForJob(pub2, JOB_WAIT)).rejects.toBeInstanceOf(JobCancelledError);
    } finally {
      await silent?.close();
    }
    await aliceJson.machineImagePublished_deleteAll({ aid });
    expect((await alice.machineImagePublished_getAll({ aid })).total).toBe(0);
    if (glance) expect(await glanceImagesNamed(glance, name2)).toEqual([]);
  });

  it('every error status as a typed error through the client (XML and JSON), 304 as a cache hit', async (ctx) => {
    steps.needs(ctx, { aid, applianceUri, qcow2 });
    // 400: a FIQL query that does not parse (the position is named), and an invalid field, in both formats.
    const q = await apiError(alice.appliance_getAll({ params: { query: fiql.raw("name=='e2e") } }), 400, base);
    expect(q.body.localizedErrorMsg?.message).toMatch(/position/);
    await apiError(aliceJson.appliance_create({ body: { name: 'x', version: '1', distributionUri: 'distributions/999' } }), 400, base);
    // 401 + WWW-Authenticate: a wrong secret key.
    const wrong = client({ ...keyOf(users.alice), secretKey: 'Not-The-Secret-Key' });
    const e401 = await apiError(wrong.appliance_getAll(), 401, base);
    expect(e401.headers['www-authenticate']).toMatch(/^Basic realm="[^"]+"$/);
    expect(`${e401.message} ${JSON.stringify(e401.body)}`).not.toContain('Not-The-Secret-Key');
    // 403: another user's template; an administrator goes through.
    await apiError(bob.appliance_get({ uid: 'alice', aid }), 403, base);
    await apiError(client(keyOf(users.bob), { format: 'json' }).appliance_getAll({ uid: 'alice' }), 403, base);
    expect((await admin.appliance_get({ uid: 'alice', aid })).uri).toBe(applianceUri);
    // 404: unknown ids, XML and JSON.
    await apiError(alice.appliance_get({ aid: 999999 }), 404, base);
    await apiError(aliceJson.machineImage_get({ aid, itid: 999999 }), 404, base);
    // 405 + Allow: a GET where only DELETE is taken (the publication cancel path), read by URI through the client.
    const e405 = await apiError(alice.getByUri('status', `${applianceUri}/images/${qcow2.dbId}/pimages/1/cancel`), 405, base);
    expect(e405.headers.allow).toBe('DELETE');
    // 409: the same name and version again (JSON).
    await apiError(aliceJson.mySoftware_create({ body: { name: 'e2e-tool', version: '1.0' } }), 409, base);
    // 412: a stale If-Match on PUT and on DELETE; the right one passes.
    const cur = await alice.send('appliance_get', { aid });
    await apiError(alice.appliance_update({ aid, ifMatch: '"stale"', body: { description: 'nope' } }), 412, base);
    await apiError(aliceJson.appliance_delete({ aid, ifMatch: '"stale"' }), 412, base);
    expect((await alice.appliance_update({ aid, ifMatch: cur.headers.etag!, body: { description: 'checked' } })).description).toBe('checked');
    // 413: a request document over the service's limit.
    await apiError(alice.appliance_update({ aid, body: { description: 'y'.repeat(LIMITS.bodyBytes + 1024) } }), 413, base);
    // 415: the client's own pipeline (signing, negotiation, typed errors) sending raw bytes to a
    // document operation. createClient never picks a wrong media type itself, so this is the only way
    // to see the 415 through the library (see the report).
    const transport = createTransport({ origin: new URL(base).origin, servicePath: new URL(base).pathname, timeoutMs: 30_000, userAgent: 'e2e' });
    try {
      const handler = pipeline({ transport: transport.exchange, auth: keyOf(users.alice), format: 'json', cache: undefined, retry: retryPolicy(false) });
      const bytes = Buffer.from('name=web&version=1');
      const e415 = await apiError(
        handler({ method: 'POST', target: 'users/alice/appliances', idempotent: false, raw: { size: bytes.length, open: () => Readable.from([bytes]) }, expect: 'appliance' }),
        415,
        base,
      );
      expect(e415.body.localizedErrorMsg?.message).toMatch(/media type/);
    } finally {
      await transport.close();
    }
    // 304: a conditional GET revalidated by the cache (ETag → If-None-Match); both formats.
    for (const format of ['xml', 'json'] as const) {
      const cached = client(keyOf(users.alice), { format, cache: true });
      const first = await cached.send('appliance_get', { aid });
      const second = await cached.send('appliance_get', { aid });
      expect([first.fromCache, second.fromCache]).toEqual([false, true]);
      expect(second.value).toEqual(first.value);
    }
    const notModified = answered.filter((a) => a.op === 'appliance_get' && a.status === 304);
    expect(notModified.length).toBe(2);
    // Errors are never retried into something else: the statuses above are what the server answered.
    for (const s of [400, 401, 403, 404, 405, 409, 412, 413, 415]) expect(answered.some((a) => a.status === s), String(s)).toBe(true);
  });

  it('clean-up through the client: images, template (force), component, account', async (ctx) => {
    steps.needs(ctx, { aid, msid, said, accountUri });
    await alice.machineImage_deleteAll({ aid });
    expect((await alice.machineImage_getAll({ aid })).total).toBe(0);
    await alice.appliance_delete({ aid, params: { force: true } });
    await apiError(alice.appliance_get({ aid }), 404, base);
    // No longer used by a template: the component and its artifact can go now.
    await alice.mySoftwareArtifact_delete({ msid, said });
    await alice.mySoftware_delete({ msid });
    expect((await aliceJson.mySoftware_getAll()).total).toBe(0);
    await alice.cloudAccount_delete({ caid: Number(accountUri.split('/').pop()) });
    expect((await alice.cloudAccount_getAll()).total).toBe(0);
  });

  it('every one of the 77 operations was called through the client and answered by the server', (ctx) => {
    steps.needsAllBefore(ctx);
    expect(ALL_OPERATION_IDS.length).toBe(76 + 1); // the reference list and the server's SBOM extension
    const all = [...ALL_OPERATION_IDS].sort();
    // Called through the client library (the recording wrapper).
    expect([...called].sort()).toEqual(all);
    // Answered by the reference server, by operation route (server side, independent of the wrapper).
    const byServer = new Map<OperationId, Set<number>>();
    for (const a of answered) if (a.op) byServer.set(a.op, (byServer.get(a.op) ?? new Set()).add(a.status));
    expect([...byServer.keys()].sort()).toEqual(all);
    // No operation ever answered a server error.
    expect(answered.filter((a) => a.status >= 500)).toEqual([]);
    // Operations the reference server keeps read-only answered with their documented 403 (Decision).
    for (const id of ['os_update', 'osTemplate_create', 'osTemplate_update', 'osTemplate_delete', 'org_create', 'userTargetFormat_update'] as const) {
      expect([...byServer.get(id)!], id).toEqual([403]);
    }
    // Every other operation succeeded at least once.
    const readOnly = new Set<string>(['os_update', 'osTemplate_create', 'osTemplate_update', 'osTemplate_delete', 'org_create', 'userTargetFormat_update']);
    for (const [id, statuses] of byServer) {
      if (!readOnly.has(id)) expect([...statuses].some((s) => s >= 200 && s < 300), `${id}: ${[...statuses].join(',')}`).toBe(true);
    }
  });

  it('every XML answer of the whole suite, success or error, validates against uforge.xsd', () => {
    const xml = answered.filter((a) => a.xml !== undefined);
    // Documents of most operations, and uforgeError bodies of every status the suite provoked.
    expect(new Set(xml.map((a) => a.op)).size).toBeGreaterThan(40);
    expect(new Set(xml.filter((a) => a.status >= 400).map((a) => a.status)).size).toBeGreaterThanOrEqual(8);
    console.log(`[e2e] ${xml.length} XML answers of ${new Set(xml.map((a) => a.op)).size} operations checked with xmllint`);
    const out = mkdtempSync(join(tmpdir(), 'e2e-xsd-'));
    try {
      const files = xml.map((a, i) => {
        const f = join(out, `${String(i).padStart(4, '0')}-${a.method}-${a.status}.xml`);
        writeFileSync(f, a.xml!);
        return f;
      });
      // One xmllint per batch (the schema is large to load); any invalid file makes it exit non-zero.
      for (let i = 0; i < files.length; i += 200) {
        const r = spawnSync('xmllint', ['--noout', '--schema', XSD, ...files.slice(i, i + 200)], { encoding: 'utf8' });
        expect(r.status, r.stderr.split('\n').filter((l) => !l.endsWith(' validates')).slice(0, 10).join('\n')).toBe(0);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
