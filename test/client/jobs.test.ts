// waitForJob against a node:http server that plays a generation or publication job (wire contract §8).
import { describe, expect, it } from 'vitest';
import { createClient, type Client, jobOf, jobState } from '../../src/client/index';
import { JobCancelledError, JobFailedError, WaitTimeoutError } from '../../src/client/errors';
import { AbortedError } from '../../src/errors';
import type { OpStatus } from '../../src/model/resources';
import { reply, startScripted, type Double, closeAfterEach } from './http-double';

let server: Double | undefined;
let client: Client | undefined;
closeAfterEach(() => [client, server]);

/** A job that goes through `steps` on successive status reads; the last one repeats. A cancel switches it to cancelled. */
async function jobServer(steps: OpStatus[]): Promise<Double> {
  let i = 0;
  let cancelled = false;
  return startScripted((req, res) => {
    if (req.method === 'DELETE') {
      cancelled = true;
      return reply(res, 200, 'status', { cancelled: true, complete: false, error: false, percentage: 0 });
    }
    const s = cancelled ? { cancelled: true } : steps[Math.min(i++, steps.length - 1)]!;
    reply(res, 200, 'status', s);
  });
}

const image = { uri: 'users/alice/appliances/3/images/7', name: 'img' };
const pub = { kind: 'PublishImageOpenStack' as const, uri: 'users/alice/appliances/3/images/7/pimages/9' };
const fastPoll = { pollMs: 5, maxPollMs: 20 };

describe('jobOf and jobState', () => {
  it('reads the job from a record or URI', () => {
    expect(jobOf(image)).toEqual({ kind: 'generation', uid: 'alice', aid: '3', itid: '7' });
    expect(jobOf('/users/a%20b/appliances/3/images/7/pimages/9')).toEqual({ kind: 'publication', uid: 'a b', aid: '3', itid: '7', pitid: '9' });
    expect(jobOf({ uri: 'users/alice/appliances/3/pimages/9', imageUri: 'users/alice/appliances/3/images/7' })).toEqual({
      kind: 'publication', uid: 'alice', aid: '3', itid: '7', pitid: '9',
    });
    expect(() => jobOf({ name: 'no uri' })).toThrow(TypeError);
    expect(() => jobOf('users/alice/appliances/3')).toThrow(TypeError);
  });
  it.each([
    [{ error: true, cancelled: true, complete: true }, 'failed'],
    [{ cancelled: true, complete: true }, 'cancelled'],
    [{ complete: true, error: false }, 'complete'],
    [{ complete: false, percentage: 50 }, 'running'],
    [{}, 'running'],
  ] as Array<[OpStatus, string]>)('%j → %s', (s, want) => expect(jobState(s)).toBe(want));
});

describe('waitForJob', () => {
  it('polls a generation to completion with progress events', async () => {
    server = await jobServer([
      { complete: false, percentage: 10, message: 'packages' },
      { complete: false, percentage: 60, message: 'disk' },
      { complete: true, error: false, percentage: 100, message: 'done' },
    ]);
    client = createClient({ url: server.url, auth: { login: 'alice', password: 'pw' } });
    const seen: number[] = [];
    const s = await client.waitForJob(image, { ...fastPoll, onProgress: (p) => seen.push(p.percentage ?? -1) });
    expect(s).toEqual({ complete: true, error: false, percentage: 100, message: 'done' });
    expect(seen).toEqual([10, 60, 100]);
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual(Array(3).fill('GET /api/users/alice/appliances/3/images/7/status'));
  });

  it('polls a publication on its own status path', async () => {
    server = await jobServer([{ complete: true, published: true }]);
    client = createClient({ url: server.url, auth: { login: 'alice', password: 'pw' } });
    await expect(client.waitForJob(pub, fastPoll)).resolves.toMatchObject({ published: true });
    expect(server.seen[0]!.url).toBe('/api/users/alice/appliances/3/images/7/pimages/9/status');
  });

  it('error wins over complete and throws JobFailedError with the last status', async () => {
    server = await jobServer([{ complete: true, error: true, errorMessage: 'disk full' }]);
    client = createClient({ url: server.url, auth: { login: 'alice', password: 'pw' } });
    const e = await client.waitForJob(image, fastPoll).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JobFailedError);
    expect((e as JobFailedError).status.errorMessage).toBe('disk full');
    expect((e as Error).message).toContain('disk full');
  });

  it('cancelled throws JobCancelledError', async () => {
    server = await jobServer([{ percentage: 5 }, { cancelled: true, complete: true }]);
    client = createClient({ url: server.url, auth: { login: 'alice', password: 'pw' } });
    await expect(client.waitForJob(image, fastPoll)).rejects.toBeInstanceOf(JobCancelledError);
  });

  it('times out with WaitTimeoutError carrying the last status, without cancelling', async () => {
    server = await jobServer([{ complete: false, percentage: 42, message: 'slow' }]);
    client = createClient({ url: server.url, auth: { login: 'alice', password: 'pw' } });
    const t0 = Date.now();
    const e = await client.waitForJob(image, { ...fastPoll, timeoutMs: 150 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WaitTimeoutError);
    expect((e as WaitTimeoutError).lastStatus?.percentage).toBe(42);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(server.seen.some((r) => r.method === 'DELETE')).toBe(false);
    expect(server.seen.length).toBeLessThan(150 / 5 + 2); // bounded: at most one poll per pollMs
  });

  it.each([
    ['generation', image, 'DELETE /api/users/alice/appliances/3/images/7/status'],
    ['publication', pub, 'DELETE /api/users/alice/appliances/3/images/7/pimages/9/cancel'],
  ] as const)('abort cancels the %s on the service, then throws AbortedError', async (_k, target, cancel) => {
    server = await jobServer([{ complete: false, percentage: 1 }]);
    client = createClient({ url: server.url, auth: { login: 'alice', password: 'pw' } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 60);
    const e = await client.waitForJob(target, { ...fastPoll, signal: ac.signal }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AbortedError);
    expect((e as Error).message).toMatch(/cancelled/);
    const deletes = server.seen.filter((r) => r.method === 'DELETE').map((r) => `${r.method} ${r.url}`);
    expect(deletes).toEqual([cancel]);
  });

  it('rejects bad options', async () => {
    client = createClient({ url: 'http://127.0.0.1:1/api', auth: { login: 'alice', password: 'pw' } });
    await expect(client.waitForJob(image, { pollMs: 0 })).rejects.toThrow(TypeError);
    await expect(client.waitForJob(image, { timeoutMs: Number.NaN })).rejects.toThrow(TypeError);
  });
});
