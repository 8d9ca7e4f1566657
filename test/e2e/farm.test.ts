// A build farm end to end (docs/server.md "Running a build farm"), all of it real: PostgreSQL 15 and Swift's S3
// on 127.0.0.1, an API node, and worker processes of the command line. Through the CLI: the README's
// declaration applied while the worker building it is killed with SIGKILL mid-build; another worker
// takes the job and the apply completes with one image of the format, whose bytes are the bucket's.
// Through the API: a cancel mid-build reaches the building worker (its build tools stop) and leaves no
// image blob. The OS layer the builds used is shared through the bucket. Costs: two builds from the shared OS layer cache (one of them begun twice), about a minute.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client';
import { createUser, type CreatedUser } from '../../src/server';
import { cliBundle, connectionEnv, runCli } from '../cli/helpers/cli';
import { examplesWorkspace } from '../engine/helpers/service';
import { farmUnavailable, startFarm, type Farm, type WorkerProcess } from '../support/farm';
import { sql } from '../support/postgres';

const skip = farmUnavailable();
if (skip) console.warn(`SKIP build farm end to end: ${skip}`);

/** Polls `fn` every 100 ms until it holds, for at most `ms`. */
async function until<T>(fn: () => T | undefined | Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The worker whose log says it claimed the job of `record` (`image:8`), attempt `attempt`. */
const claimedBy = (workers: readonly WorkerProcess[], record: string, attempt: number): WorkerProcess | undefined =>
  workers.find((w) => w.lines.some((l) => l.includes(`"job ${record} claimed by `) && l.includes(`(attempt ${attempt})`)));

/** The pids of a process's descendants. */
function descendants(pid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  const kids = new Map<number, number[]>();
  for (const line of out.trim().split('\n')) {
    const [p, pp] = line.trim().split(/\s+/).map(Number);
    kids.set(pp!, [...(kids.get(pp!) ?? []), p!]);
  }
  const all: number[] = [];
  const walk = (p: number): void => {
    for (const k of kids.get(p) ?? []) {
      all.push(k);
      walk(k);
    }
  };
  walk(pid);
  return all;
}

describe.skipIf(skip !== undefined)('build farm: PostgreSQL, S3, an API node and two workers', () => {
  let farm: Farm;
  let alice: CreatedUser;
  let client: Client;
  beforeAll(async () => {
    cliBundle();
    farm = await startFarm({ workers: 2 });
    alice = await createUser(farm.apiDir, { login: 'alice', databaseUrl: farm.databaseUrl, secretKeyFile: farm.secretKeyFile });
    client = createClient({ url: farm.api.url, auth: alice, retry: false });
  }, 300_000);
  afterAll(async () => {
    await client?.close();
    await farm?.close();
  });

  it('apply completes although the worker building the image is killed with SIGKILL mid-build: one image, its bytes in the bucket', async () => {
    const dir = examplesWorkspace('af-farm-');
    const applying = runCli(['apply', 'local.yml', '--output', 'out', '--json'], { cwd: dir, env: connectionEnv(farm.api.url, alice), killAfterMs: 900_000 });
    // The image record appears with the apply's generation; then a worker claims its job and builds.
    const image = await until(async () => (await sql<{ id: number }>(farm.databaseUrl, "SELECT id FROM appliance_forge.records WHERE kind = 'image'"))[0], 120_000, 'the image record');
    const first = await until(() => claimedBy(farm.workers, `image:${image.id}`, 1), 120_000, 'a worker claiming the build');
    const other = farm.workers.find((w) => w !== first)!;
    // Mid-build: the image's progress has moved past its start.
    await until(async () => {
      const [row] = await sql<{ doc: string }>(farm.databaseUrl, 'SELECT doc FROM appliance_forge.records WHERE id = $1', [image.id]);
      return (JSON.parse(row!.doc) as { status: { percentage?: number } }).status.percentage! >= 10 || undefined;
    }, 300_000, 'the build under way');
    await first.kill('SIGKILL');
    const second = await until(() => claimedBy([other], `image:${image.id}`, 2), 120_000, 'the other worker taking the job');
    expect(second).toBe(other);

    const r = await applying;
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const out = JSON.parse(r.stdout) as { files: Array<{ path: string }> };
    const qcow2 = out.files.find((f) => f.path.endsWith('.qcow2'))!;
    const local = createHash('sha256').update(readFileSync(path.resolve(dir, qcow2.path))).digest('hex');

    // One image of the format, complete, and its file is the bucket's object.
    const images = await sql<{ doc: string }>(farm.databaseUrl, "SELECT doc FROM appliance_forge.records WHERE kind = 'image'");
    expect(images).toHaveLength(1);
    const doc = JSON.parse(images[0]!.doc) as { formatName: string; status: { complete?: boolean }; file: { path: string; sha256: string } };
    expect(doc).toMatchObject({ formatName: 'QCOW2', status: { complete: true } });
    expect(doc.file.sha256).toBe(local);
    const object = await farm.s3.client.send(new GetObjectCommand({ Bucket: farm.s3.bucket, Key: `${farm.blobPrefix}/${doc.file.path}` }));
    expect(createHash('sha256').update(await object.Body!.transformToByteArray()).digest('hex')).toBe(local);
    // No other image file in the bucket: the killed attempt wrote none.
    const imageBlobs = (await farm.s3.objects()).filter((o) => o.Key?.startsWith(`${farm.blobPrefix}/images/`) && o.Key.endsWith('.qcow2'));
    expect(imageBlobs.map((o) => o.Key)).toEqual([`${farm.blobPrefix}/${doc.file.path}`]);
    // The OS layer the build used is shared with the farm (in the background, once): indexed once, its archive in the bucket.
    const layers = await until(async () => {
      const rows = await sql<{ blob: string }>(farm.databaseUrl, 'SELECT blob FROM appliance_forge.os_layers');
      return rows.length > 0 ? rows : undefined;
    }, 180_000, 'the OS layer shared');
    expect(layers).toHaveLength(1);
    expect((await farm.s3.objects()).map((o) => o.Key)).toContain(`${farm.blobPrefix}/${layers[0]!.blob}`);
  }, 1_200_000);

  it('a cancel mid-build reaches the building worker within seconds: its tools stop, no image blob is left', async () => {
    // A worker to replace the one killed above.
    await farm.addWorker().started;
    const aid = (await client.appliance_getAll({ uid: 'alice' })).appliances![0]!.dbId!;
    const created = await client.machineImage_generate({ uid: 'alice', aid, body: { targetFormat: { name: 'Raw Virtual Disk' } } });
    const record = `image:${created.dbId!}`;
    const worker = await until(() => claimedBy(farm.workers.filter((w) => w.proc.exitCode === null), record, 1), 120_000, 'a worker claiming the build');
    await until(async () => ((await client.machineImageStatus_get({ uid: 'alice', aid, itid: created.dbId! })).percentage ?? 0) >= 5 || undefined, 300_000, 'the build under way');
    const before = Date.now();
    const status = await client.machineImageGeneration_cancel({ uid: 'alice', aid, itid: created.dbId! });
    expect(status.cancelled).toBe(true);
    // The worker's run ends (its log says so) and its build's processes are gone, within seconds.
    await until(() => worker.lines.some((l) => l.includes(`job ${record} ended on`)) || undefined, 30_000, 'the worker ending the cancelled build');
    const took = Date.now() - before;
    expect(took).toBeLessThan(30_000);
    await until(() => descendants(worker.proc.pid!).length === 0 || undefined, 10_000, 'the build tools stopping');
    const final = await client.machineImageStatus_get({ uid: 'alice', aid, itid: created.dbId! });
    expect(final).toMatchObject({ cancelled: true });
    expect(final.complete ?? false).toBe(false);
    const raws = (await farm.s3.objects()).filter((o) => o.Key?.startsWith(`${farm.blobPrefix}/images/`) && o.Key.endsWith('.raw'));
    expect(raws).toEqual([]);
    expect((await farm.s3.uploads()).filter((u) => u.Key?.startsWith(`${farm.blobPrefix}/images/`))).toEqual([]);
  }, 900_000);
});
