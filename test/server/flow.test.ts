// The spec's flows through the project's client: the four-stage software flow (rule 4), the OS
// profile and package changes (rules 2–3), uploads with the fileName rules (§9) and downloads.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/client';
import { startTestServer, tempDir, validatesAgainstXsd, type TestServer } from './helpers';

describe('flows', () => {
  let t: TestServer;
  let c: Client;
  beforeAll(async () => {
    t = await startTestServer();
    c = t.client(t.alice);
  });
  afterAll(async () => t.close());

  it('software in four stages: component, artifact, upload, template update', async () => {
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'web', version: '1.0', distributionUri: 'distributions/1' } });
    expect(app.revision).toBe(0);
    const aid = app.dbId!;
    const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'tool', version: '2' } });
    expect(sw.artifactsUri).toBe(`users/alice/mysoftware/${sw.dbId}/artifacts`);
    await expect(c.mySoftware_create({ uid: 'alice', body: { name: 'tool', version: '2' } })).rejects.toMatchObject({ status: 409 });
    const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { kind: 'SoftwareFile', name: 'tool.sh', installLocation: '/opt/tool', rights: '0755' } });
    expect(art.binaryUri).toBe(`users/alice/mysoftware/${sw.dbId}/artifacts/${art.dbId}/bin`);
    expect(art.uploaded).toBe(false);

    const src = join(tempDir(), 'tool.sh');
    const content = Buffer.from('#!/bin/sh\necho hello\n'.repeat(5000));
    writeFileSync(src, content);
    const up = await c.upload({ msid: sw.dbId!, said: art.dbId!, fileName: 'tool.sh' }, { file: src });
    expect(up.size).toBe(content.length);
    expect(up.sha256sum).toBe(createHash('sha256').update(content).digest('hex'));
    expect(up.md5sum).toBe(createHash('md5').update(content).digest('hex'));
    expect(up.uploaded).toBe(true);

    const dst = join(tempDir(), 'back.sh');
    const d = await c.download({ op: 'mySoftwareArtifact_downloadFile', msid: sw.dbId!, said: art.dbId!, fileName: 'tool.sh' }, { to: dst });
    expect(d.size).toBe(content.length);
    expect(readFileSync(dst).equals(content)).toBe(true);

    const updated = await c.appliance_update({ uid: 'alice', aid, body: { uri: app.uri!, mySoftwareList: [{ name: 'tool', version: '2', uri: sw.uri! }] } });
    expect(updated.mySoftwareList?.map((m) => m.uri)).toEqual([sw.uri]);
    expect(updated.revision).toBe(1);
    const same = await c.appliance_update({ uid: 'alice', aid, body: { mySoftwareList: [{ uri: sw.uri! }] } });
    expect(same.revision).toBe(1);
    const swNow = await c.mySoftware_get({ uid: 'alice', msid: sw.dbId! });
    expect(swNow.applianceUris).toEqual([app.uri]);
    await expect(c.appliance_update({ uid: 'alice', aid, body: { mySoftwareList: [{ uri: 'users/alice/mysoftware/99999' }] } })).rejects.toMatchObject({ status: 400 });
    await expect(c.mySoftware_delete({ uid: 'alice', msid: sw.dbId! })).rejects.toMatchObject({ status: 409 });
  });

  it('refuses upload file names that are not plain names (wire contract §9)', async () => {
    const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'names', version: '1' } });
    const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { name: 'x' } });
    const base = `users/alice/mysoftware/${sw.dbId}/artifacts/${art.dbId}/bin`;
    for (const bad of ['..', '%2E%2E', 'a%2Fb', 'a%5Cb', 'a%00b', 'a%0Ab', '%252F', 'a%252Fb']) {
      const r = await t.raw('POST', `${base}/${bad}`, { headers: { 'content-type': 'application/octet-stream' }, body: 'data' });
      expect(r.status, bad).toBe(400);
      expect(r.text).toContain('uforgeError');
    }
    const ok = await t.raw('POST', `${base}/file%20name.tar.gz`, { headers: { 'content-type': 'application/gzip' }, body: 'data' });
    expect(ok.status).toBe(200);
    validatesAgainstXsd(ok.text);
    const noName = await t.raw('POST', base, { body: 'more' });
    expect(noName.status).toBe(200);
    const got = await c.mySoftwareArtifact_get({ uid: 'alice', msid: sw.dbId!, said: art.dbId! });
    expect(got.size).toBe(4);
  });

  it('OS profile from a base profile, then package changes', async () => {
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'os', version: '1', distributionUri: 'distributions/1' } });
    const profiles = await c.osTemplate_getAll({ id: 1 });
    const minimal = profiles.distribProfiles!.find((p) => p.name === 'Minimal')!;
    expect(minimal).toBeTruthy();
    const basePkgs = await c.osTemplatePkgs_get({ id: 1, prid: minimal.dbId! });
    // The spec's table writes `distribution/…`: accepted too (wire contract §1).
    const legacy = minimal.uri!.replace(/^distributions\//, 'distribution/');
    const r = await t.raw('POST', `users/alice/appliances/${app.dbId}/osprofile`, {
      headers: { 'content-type': 'application/xml' },
      body: `<ns0:linuxProfile xmlns:ns0="http://www.usharesoft.com/uforge"><name>Minimal</name><standardProfileUri>${legacy}</standardProfileUri></ns0:linuxProfile>`,
    });
    expect(r.status, r.text).toBe(201);
    validatesAgainstXsd(r.text);
    const osid = r.headers.location!.split('/').pop()!;
    const again = await t.raw('POST', `users/alice/appliances/${app.dbId}/osprofile`, { headers: { 'content-type': 'application/xml' }, body: `<linuxProfile><standardProfileUri>${minimal.uri}</standardProfileUri></linuxProfile>` });
    expect(again.status).toBe(409);

    const pkgs = await c.applianceOSProfilePkg_getAll({ uid: 'alice', aid: app.dbId!, osid });
    expect(pkgs.pkgs!.map((p) => p.dbId).sort()).toEqual(basePkgs.pkgs!.map((p) => p.dbId).sort());
    const afterProfile = await c.appliance_get({ uid: 'alice', aid: app.dbId! });
    expect(afterProfile.osProfileUri).toBe(`users/alice/appliances/${app.dbId}/osprofile/${osid}`);

    const found = await c.osPkg_getAll({ id: 1, params: { query: "name=='curl'" } });
    const curl = found.pkgs![0]!;
    expect(curl.name).toBe('curl');
    const victim = pkgs.pkgs![0]!;
    const changed = await c.applianceOSProfilePkg_updateAll({ uid: 'alice', aid: app.dbId!, osid, body: { addedPkgUris: [curl.uri!], deletedPkgUris: [victim.uri!] } });
    const names = changed.pkgs!.map((p) => p.name);
    expect(names).toContain('curl');
    expect(changed.pkgs!.some((p) => p.dbId === victim.dbId)).toBe(false);
    const after = await c.appliance_get({ uid: 'alice', aid: app.dbId! });
    expect(after.revision).toBe(afterProfile.revision! + 1);
    await expect(
      c.applianceOSProfilePkg_updateAll({ uid: 'alice', aid: app.dbId!, osid, body: { addedPkgUris: ['distributions/1/pkgs/999999999'] } }),
    ).rejects.toMatchObject({ status: 400 });
    const unchanged = await c.appliance_get({ uid: 'alice', aid: app.dbId! });
    expect(unchanged.revision).toBe(after.revision);
  });

  it('lists with FIQL, order and paging', async () => {
    for (const v of ['1', '2', '3']) await c.appliance_create({ uid: 'alice', body: { name: 'list', version: v, distributionUri: 'distributions/1' } });
    const page = await c.appliance_getAll({ uid: 'alice', params: { query: "name=='list'", orderBy: 'version', descending: true, count: 2, offset: 0 } });
    expect(page.total).toBe(3);
    expect(page.appliances!.map((a) => a.version)).toEqual(['3', '2']);
    const wild = await c.appliance_getAll({ uid: 'alice', params: { query: "name=='li*'" } });
    expect(wild.total).toBe(3);
  });
});
