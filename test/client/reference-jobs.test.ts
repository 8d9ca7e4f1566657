// waitForJob on a real generation by the reference server: progress grows, the final status is complete,
// and an aborted wait cancels the generation on the service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError, JobCancelledError, type Client, type OpStatus } from '../../src/index';
import { startReferenceServer, type ReferenceServer } from '../support/reference-server';

let ref: ReferenceServer<'dave'>;
let c: Client;

beforeAll(async () => {
  ref = await startReferenceServer({ dave: {} }, { prefix: 'forge-client-jobs-' });
  c = ref.client(ref.users.dave);
});
afterAll(async () => {
  await ref?.close();
});

async function generate(name: string) {
  const a = await c.appliance_create({ body: { name, version: '1', distributionUri: 'distributions/1', installProfile: { diskSize: 1024, memorySize: 512 } } });
  const minimal = (await c.osTemplate_getAll({ id: 1 })).distribProfiles!.find((p) => p.name === 'Minimal')!;
  await c.applianceOSProfile_create({ aid: a.dbId!, body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: minimal.uri! } });
  return c.machineImage_generate({ aid: a.dbId!, body: { targetFormat: { name: 'Raw Virtual Disk' }, installProfile: { diskSize: 1024 } } });
}

describe('waitForJob against the reference server', () => {
  it('waits for a generation to complete, with growing progress', async () => {
    const img = await generate('gen-ok');
    const seen: OpStatus[] = [];
    const s = await c.waitForJob(img, { pollMs: 50, maxPollMs: 500, timeoutMs: 900_000, onProgress: (p) => seen.push(p) });
    expect([s.complete, s.error ?? false]).toEqual([true, false]);
    const pct = seen.map((x) => x.percentage ?? 0);
    expect(pct.every((p, i) => i === 0 || p >= pct[i - 1]!)).toBe(true);
    const done = await c.getByUri('image', img.uri!);
    expect(done.fileSize).toBeGreaterThan(0);
  });

  it('an aborted wait cancels the generation on the service', async () => {
    const img = await generate('gen-abort');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    await expect(c.waitForJob(img, { pollMs: 10, signal: ac.signal })).rejects.toBeInstanceOf(AbortedError);
    // The service ends the job as cancelled: a second wait sees it so.
    await expect(c.waitForJob(img, { pollMs: 20, timeoutMs: 30_000 })).rejects.toBeInstanceOf(JobCancelledError);
  });
});
