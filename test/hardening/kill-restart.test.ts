// SIGKILL of the server child process at random points during uploads, generations and
// publications (bounded rounds), then a restart on the same data dir. Afterwards: no acknowledged
// record lost (compared with what the client was answered), no corrupt file served (every download
// hashed against its sha256), no job stuck (every status terminal), no half-written file left.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { createUser, type CreatedUser } from '../../src/server';
import { imagesNamed, openStackServices } from '../support/openstack';
import { spawnServer, type ChildServer } from './support/child-server';
import { generatableAppliance, knownFile, sha256OfDownload, sleep, type KnownFile } from './support/fixtures';
import { LONG, tempDir } from './support/harness';

const ROUNDS = LONG ? 16 : 4;
const PUBLISH_ROUNDS = LONG ? 8 : 3;
const DEADLINE_MS = LONG ? 10 * 60_000 : 100_000;
const FORMATS = ['QCOW2', 'Raw Virtual Disk'];

const clientFor = (url: string, u: CreatedUser): Client =>
  createClient({ url, auth: { login: u.login, publicKey: u.publicKey, secretKey: u.secretKey }, retry: false, timeoutMs: 20_000 });

/** Put a big file in the template, so that a generation or publication lasts long enough to be killed in. */
async function withPayload(c: Client, aid: string, f: KnownFile): Promise<string> {
  const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'payload', version: '1' } });
  const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: String(sw.dbId), body: { kind: 'SoftwareFile', name: 'big.bin' } } as never);
  await c.upload({ uid: 'alice', msid: String(sw.dbId), said: String(art.dbId), fileName: 'big.bin' }, { file: f.path });
  await c.appliance_update({ uid: 'alice', aid, body: { mySoftwareList: [{ uri: sw.uri! }] } });
  return sw.uri!;
}

interface Acked {
  software: string[];
  uploads: Array<{ uri: string; sha256: string }>;
  images: string[];
}

describe('SIGKILL during uploads and generations', () => {
  let dataDir: string;
  let alice: CreatedUser;
  let files: KnownFile[];
  let srv: ChildServer | undefined;
  let work: string;
  const acked: Acked = { software: [], uploads: [], images: [] };
  const figures = { rounds: 0, killsDuringUpload: 0, killsDuringGeneration: 0, uploadsAcked: 0, uploadsCut: 0 };

  beforeAll(async () => {
    dataDir = tempDir('forge-kill-');
    alice = await createUser(dataDir, { login: 'alice' });
    work = tempDir('forge-kill-files-');
    files = [knownFile(join(work, 'small.bin'), 300 * 1024), knownFile(join(work, 'mid.bin'), 6 * 1024 * 1024), knownFile(join(work, 'big.bin'), 24 * 1024 * 1024)];
  });
  afterAll(async () => {
    console.log(`[hardening] kill/restart: ${JSON.stringify(figures)}`);
    await srv?.kill();
    for (const d of [dataDir, work]) rmSync(d, { recursive: true, force: true });
  });

  /** Uploads until the server dies: component, artifact, file; each step recorded once answered. */
  async function uploadLoop(c: Client, round: number, stop: { dead: boolean }): Promise<void> {
    for (let i = 0; i < 200 && !stop.dead; i++) {
      try {
        const sw = await c.mySoftware_create({ uid: 'alice', body: { name: `sw-${round}-${i}`, version: '1' } });
        acked.software.push(sw.uri!);
        const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: String(sw.dbId), body: { kind: 'SoftwareFile', name: 'f.bin' } } as never);
        const f = files[(round + i) % files.length]!;
        const done = await c.upload({ uid: 'alice', msid: String(sw.dbId), said: String(art.dbId), fileName: 'f.bin' }, { file: f.path });
        expect(done.sha256sum).toBe(f.sha256);
        acked.uploads.push({ uri: done.uri!, sha256: f.sha256 });
        figures.uploadsAcked++;
      } catch {
        if (!stop.dead) throw new Error('a request failed while the server was alive');
        figures.uploadsCut++;
        figures.killsDuringUpload++;
        return;
      }
    }
  }

  it('acknowledged records and files survive; no job stays running; nothing half-written is served', async () => {
    const end = Date.now() + DEADLINE_MS;
    srv = await spawnServer(dataDir);
    const setup = clientFor(srv.url, alice);
    const aid = await generatableAppliance(setup, 'killed');
    acked.software.push(await withPayload(setup, aid, files[2]!));
    await setup.close();
    await srv.kill();

    for (let round = 0; round < ROUNDS && Date.now() < end; round++) {
      srv = await spawnServer(dataDir);
      const c = clientFor(srv.url, alice);
      const stop = { dead: false };
      // Start a generation (409 when one of that format is still running: the restart should have closed it).
      const format = FORMATS[round % FORMATS.length]!;
      const img = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: format }, installProfile: { diskSize: 1024 }, compress: round % 2 === 0 } });
      acked.images.push(img.uri!);
      const uploads = uploadLoop(c, round, stop);
      // An image takes a few hundred ms here: kill anywhere in 10..900 ms, and say what was running.
      await sleep(10 + Math.floor(Math.random() * 890));
      const running = await c.getByUri('image', img.uri!).then((i) => !(i.status!.complete || i.status!.error || i.status!.cancelled), () => false);
      stop.dead = true;
      await srv.kill();
      await uploads;
      await c.close();
      figures.rounds++;
      if (running) figures.killsDuringGeneration++;
    }

    // Restart: the data dir must be clean before any new work starts.
    srv = await spawnServer(dataDir);
    expect(readdirSync(join(dataDir, 'tmp'))).toEqual([]);
    const c = clientFor(srv.url, alice);

    const sw = await c.mySoftware_getAll({ uid: 'alice', params: { count: 10_000 } });
    const have = new Set((sw.mySoftwareList ?? []).map((s) => s.uri));
    expect(acked.software.filter((u) => !have.has(u))).toEqual([]);

    for (const u of acked.uploads) {
      const a = await c.getByUri('softwareArtifact', u.uri);
      expect(a.uploaded).toBe(true);
      expect(a.sha256sum).toBe(u.sha256);
    }
    // Every file the server claims to have (acknowledged or not) downloads whole and matches.
    const known = new Set(files.map((f) => f.sha256));
    let served = 0;
    for (const s of sw.mySoftwareList ?? []) {
      const arts = await c.mySoftwareArtifact_getAll({ uid: 'alice', msid: String(s.dbId) });
      for (const a of arts.softwareArtifacts ?? []) {
        if (!a.uploaded) continue;
        expect(known.has(a.sha256sum!)).toBe(true);
        expect(await sha256OfDownload(c, a.binaryUri!)).toBe(a.sha256sum);
        served++;
      }
    }

    const images = await c.machineImage_getAll({ uid: 'alice', aid });
    const states: Record<string, number> = {};
    for (const i of images.images ?? []) {
      const st = i.status!;
      expect(st.complete || st.error || st.cancelled).toBe(true);
      const k = st.error ? 'error' : st.cancelled ? 'cancelled' : 'complete';
      states[k] = (states[k] ?? 0) + 1;
      if (st.complete && !st.error) expect(await sha256OfDownload(c, i.downloadUri!)).toBe(i.sha256sum);
    }
    expect(acked.images.filter((u) => !(images.images ?? []).some((i) => i.uri === u))).toEqual([]);
    console.log(`[hardening] kill/restart: ${served} files served and hashed, images ${JSON.stringify(states)}`);
    // A new generation after all that runs to completion.
    const again = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'QCOW2' }, installProfile: { diskSize: 1024 } } });
    const final = await c.waitForJob(again, { timeoutMs: 900_000 });
    expect(final.complete).toBe(true);
    await c.close();
  });
});

describe('SIGKILL during publications (real Keystone/Glance)', () => {
  const os = openStackServices();
  const env = os.env;
  if (!env) console.log(`[hardening] publication kill test skipped: ${os.skip}`);

  it.skipIf(!env)('every publication ends terminal after a restart; a published one exists in Glance', async () => {
    const e = env!;
    const dataDir = tempDir('forge-kill-pub-');
    const alice = await createUser(dataDir, { login: 'alice' });
    let srv = await spawnServer(dataDir);
    let c = clientFor(srv.url, alice);
    const aid = await generatableAppliance(c, 'published');
    await withPayload(c, aid, knownFile(join(dataDir, 'payload.bin'), 48 * 1024 * 1024));
    const img = await c.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'OpenStack QCOW2' }, installProfile: { diskSize: 1024 } } });
    expect((await c.waitForJob(img, { timeoutMs: 900_000 })).complete).toBe(true);
    const itid = String(img.dbId);
    const names: string[] = [];
    const counts = { rounds: 0, killedRunning: 0, published: 0, interrupted: 0 };
    try {
      for (let round = 0; round < PUBLISH_ROUNDS; round++) {
        const displayName = `forge-kill-${process.pid}-${Date.now()}-${round}`;
        names.push(displayName);
        await c.applianceImage_publish({
          uid: 'alice',
          aid,
          itid,
          body: {
            kind: 'PublishImageOpenStack',
            credAccount: { kind: 'CredAccountOpenStack', targetPlatform: { name: 'OpenStack' }, keystoneUrl: e.keystoneUrl, glanceUrl: e.glanceUrl, login: e.user.login, password: e.user.password, keystoneVersion: 'v3' },
            keystoneDomain: e.domain,
            keystoneProject: e.user.project,
            displayName,
            publicImage: false,
          },
        } as never);
        await sleep(Math.floor(Math.random() * 400));
        const pubs = await c.machineImagePublished_getAll({ uid: 'alice', aid }).catch(() => undefined);
        if ((pubs?.publishImages ?? []).some((p) => !(p.status!.complete || p.status!.error || p.status!.cancelled))) counts.killedRunning++;
        await srv.kill();
        await c.close();
        srv = await spawnServer(dataDir);
        c = clientFor(srv.url, alice);
        counts.rounds++;
      }
      const pubs = await c.machineImagePublished_getAll({ uid: 'alice', aid });
      expect((pubs.publishImages ?? []).length).toBe(PUBLISH_ROUNDS);
      for (const p of pubs.publishImages ?? []) {
        const st = p.status!;
        expect(st.complete || st.error || st.cancelled).toBe(true);
        if (st.published) {
          counts.published++;
          const inGlance = await imagesNamed(e, p.displayName!);
          expect(inGlance.map(([id]) => id)).toContain(p.cloudId);
        } else counts.interrupted++;
      }
      console.log(`[hardening] publication kill/restart: ${JSON.stringify(counts)}`);
    } finally {
      await c.close();
      await srv.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
