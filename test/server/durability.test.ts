// Durable state (task item 3): records survive a restart; a server killed with SIGKILL during an
// upload or a generation restarts with every acknowledged record intact, no job stuck and no
// partial file served. Runs the built command line (`npx tsc -p tsconfig.json` first).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { createUser, type CreatedUser } from '../../src/server';
import { startTestServer, tempDir, until } from './helpers';

const MAIN = resolve(__dirname, '../../dist/src/cli/main.js');

describe('restart', () => {
  it('keeps records across a graceful stop and start', async () => {
    const t = await startTestServer();
    const c = t.client(t.alice);
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'keep', version: '1', distributionUri: 'distributions/1', description: 'd' } });
    await t.restart();
    const c2 = t.client(t.alice);
    const again = await c2.appliance_get({ uid: 'alice', aid: app.dbId! });
    expect(again).toMatchObject({ name: 'keep', version: '1', description: 'd', revision: 0 });
    await t.close();
  });
});

interface Proc {
  child: ChildProcess;
  url: string;
}

async function serve(dataDir: string): Promise<Proc> {
  const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--data-dir', dataDir, '--no-catalog-refresh'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n')) res(line!.trim());
    });
    child.on('exit', (code) => rej(new Error(`server exited with ${code}`)));
  });
  return { child, url };
}

async function kill9(p: Proc): Promise<void> {
  const gone = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGKILL');
  await gone;
}

describe.skipIf(!existsSync(MAIN))('SIGKILL', () => {
  const procs: Proc[] = [];
  afterAll(() => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });
  const clientOf = (url: string, u: CreatedUser): Client => createClient({ url, auth: { login: u.login, publicKey: u.publicKey, secretKey: u.secretKey }, retry: false });

  it('during an upload: the artifact stays without a file, no temp file is left', async () => {
    const dir = tempDir();
    const alice = await createUser(dir, { login: 'alice' });
    const p = await serve(dir);
    procs.push(p);
    const c = clientOf(p.url, alice);
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'acked', version: '1', distributionUri: 'distributions/1' } });
    const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'big', version: '1' } });
    const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { name: 'big.bin' } });

    // A slow body: chunks keep coming until the process is killed.
    const chunk = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    const open = () =>
      new Readable({
        read() {
          sent += chunk.length;
          setTimeout(() => this.push(chunk), 5);
        },
      });
    const upload = c.upload({ msid: sw.dbId!, said: art.dbId!, fileName: 'big.bin' }, { open, size: 1024 * 1024 * 1024 }).catch((e: unknown) => e);
    await until(() => sent > 2 * 1024 * 1024 && readdirSync(join(dir, 'tmp')).length > 0);
    await kill9(p);
    expect(await upload).toBeInstanceOf(Error);

    const p2 = await serve(dir);
    procs.push(p2);
    const c2 = clientOf(p2.url, alice);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    expect(readdirSync(join(dir, 'files'))).toEqual([]);
    expect((await c2.appliance_get({ uid: 'alice', aid: app.dbId! })).name).toBe('acked');
    const a = await c2.mySoftwareArtifact_get({ uid: 'alice', msid: sw.dbId!, said: art.dbId! });
    expect(a.uploaded).toBe(false);
    await expect(c2.download({ op: 'mySoftwareArtifact_download', msid: sw.dbId!, said: art.dbId! }, { to: join(tempDir(), 'x') })).rejects.toMatchObject({ status: 404 });
    await kill9(p2);
  }, 60_000);

  it('during a generation: the job ends as interrupted, nothing partial is served', async () => {
    const dir = tempDir();
    const alice = await createUser(dir, { login: 'alice' });
    const p = await serve(dir);
    procs.push(p);
    const c = clientOf(p.url, alice);
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'gen', version: '1', distributionUri: 'distributions/1' } });
    const minimal = (await c.osTemplate_getAll({ id: 1 })).distribProfiles!.find((x) => x.name === 'Minimal')!;
    await c.applianceOSProfile_create({ uid: 'alice', aid: app.dbId!, body: { kind: 'LinuxProfile', standardProfileUri: minimal.uri! } });
    const image = await c.machineImage_generate({ uid: 'alice', aid: app.dbId!, body: { targetFormat: { name: 'Raw Virtual Disk' }, installProfile: { diskSize: 1024 } } });
    await kill9(p);

    const p2 = await serve(dir);
    procs.push(p2);
    const c2 = clientOf(p2.url, alice);
    const st = await c2.machineImageStatus_get({ uid: 'alice', aid: app.dbId!, itid: image.dbId! });
    if (!st.complete) {
      expect(st.error).toBe(true);
      expect(st.errorMessage).toBe('interrupted by a server restart');
      await expect(c2.download({ op: 'machineImage_download', aid: app.dbId!, itid: image.dbId! }, { to: join(tempDir(), 'x') })).rejects.toMatchObject({ status: 404 });
      expect(readdirSync(join(dir, 'images'))).toEqual([]);
    }
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    // A new generation of the same format is not blocked by the interrupted one.
    const again = await c2.machineImage_generate({ uid: 'alice', aid: app.dbId!, body: { targetFormat: { name: 'Raw Virtual Disk' }, installProfile: { diskSize: 1024 } } });
    const final = await c2.waitForJob(again, { timeoutMs: 900_000, pollMs: 100 });
    expect(final.complete).toBe(true);
    await kill9(p2);
  }, 900_000);
});
