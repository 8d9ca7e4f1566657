// Retry: the pure predicates and backoff, table-tested; then the fault double (a labelled test
// double: it answers 503, resets connections) proving that no POST is ever sent twice.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/index';
import { backoffDelay, DEFAULT_RETRY, isRetryable, parseRetryAfter, type Outcome } from '../../src/client/retry';
import { failureKind } from '../../src/client/transport';
import { pollDelay, waitUntil } from '../../src/client/waiter';
import { ApiError, HttpError, TransportError } from '../../src/client/errors';
import { reply, replyError, startScripted, type Double, closeAfterEach } from './http-double';

describe('isRetryable', () => {
  const table: Array<[Outcome, boolean, boolean]> = [
    [{ status: 503 }, true, true],
    [{ status: 503 }, false, false],
    [{ status: 429 }, true, true],
    [{ status: 500 }, true, true],
    [{ status: 502 }, true, true],
    [{ status: 504 }, true, true],
    [{ status: 501 }, true, false],
    [{ status: 400 }, true, false],
    [{ status: 404 }, true, false],
    [{ status: 409 }, true, false],
    [{ failure: 'connect' }, false, true],
    [{ failure: 'connect' }, true, true],
    [{ failure: 'reset' }, true, true],
    [{ failure: 'reset' }, false, false],
    [{ failure: 'timeout' }, true, true],
    [{ failure: 'timeout' }, false, false],
    [{ failure: 'other' }, true, false],
  ];
  it.each(table)('%j idempotent=%s → %s', (o, idem, want) => expect(isRetryable(o, idem)).toBe(want));
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-20T07:45:00.000Z');
  const table: Array<[string | undefined, number | undefined]> = [
    [undefined, undefined],
    ['0', 0],
    ['3', 3000],
    [' 120 ', 120_000],
    ['Fri, 20 Nov 2026 07:45:10 GMT', 10_000],
    ['Fri, 20 Nov 2026 07:44:00 GMT', 0],
    ['-5', undefined],
    ['1.5', undefined],
    ['soon', undefined],
  ];
  it.each(table)('%j → %j', (v, want) => expect(parseRetryAfter(v, now)).toBe(want));
});

describe('backoffDelay', () => {
  const p = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 };
  const table: Array<[number, number | undefined, number, number]> = [
    [1, undefined, 1, 100],
    [2, undefined, 1, 200],
    [3, undefined, 0.5, 200],
    [4, undefined, 1, 800],
    [5, undefined, 1, 1000],
    [60, undefined, 1, 1000],
    [1, undefined, 0, 0],
    [1, 2000, 0.3, 2000],
    [1, 60_000, 0.3, 5000],
  ];
  it.each(table)('attempt %d retryAfter %j random %d → %d', (a, ra, r, want) => expect(backoffDelay(a, p, ra, () => r)).toBe(want));
  it('pollDelay doubles up to max with jitter', () => {
    const o = { minDelayMs: 100, maxDelayMs: 500, jitter: 0.2 };
    expect([1, 2, 3, 4].map((n) => pollDelay(n, o, () => 0))).toEqual([100, 200, 400, 500]);
    expect(pollDelay(1, o, () => 1)).toBe(80);
  });
  it('waitUntil keeps the first delay until steadyUntil, and lets it double after', async () => {
    const run = async (o: { minDelayMs: number; steadyUntil: number }, polls: number): Promise<number> => {
      let n = 0;
      const t0 = performance.now();
      const r = await waitUntil(async () => ++n, (v) => v >= polls, { ...o, maxDelayMs: 60_000, jitter: 0, deadline: Date.now() + 60_000 });
      expect(r).toEqual({ done: true, value: polls });
      return performance.now() - t0;
    };
    // 40 polls 1 ms apart: doubling instead would wait far beyond the test's timeout.
    await run({ minDelayMs: 1, steadyUntil: Date.now() + 60_000 }, 40);
    // Past steadyUntil: 20 + 40 + 80 + 160 ms before the fifth poll (timers never fire early).
    expect(await run({ minDelayMs: 20, steadyUntil: Date.now() - 1 }, 5)).toBeGreaterThanOrEqual(295);
  });
});

describe('failureKind', () => {
  const table: Array<[unknown, string]> = [
    [Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), 'connect'],
    [Object.assign(new Error('x'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), 'connect'],
    [Object.assign(new Error('x'), { code: 'ECONNRESET' }), 'reset'],
    [Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' }), 'reset'],
    [Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), 'timeout'],
    [new Error('wrapped', { cause: Object.assign(new Error('y'), { code: 'ECONNREFUSED' }) }), 'connect'],
    [new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]), 'connect'],
    [new Error('other'), 'other'],
    ['string', 'other'],
  ];
  it.each(table)('%s → %s', (e, want) => expect(failureKind(e)).toBe(want));
});

let server: Double | undefined;
let client: Client | undefined;
closeAfterEach(() => [client, server]);
const fast = { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20 };
const auth = { login: 'alice', password: 'pw' };
const posts = (d: Double) => d.seen.filter((s) => s.method === 'POST').length;

describe('retry against the fault double', () => {
  it('a POST answered 503 arrives exactly once', async () => {
    server = await startScripted((_req, res) => replyError(res, 503, 'overloaded', 'xml', { 'retry-after': '0' }));
    client = createClient({ url: server.url, auth, retry: fast });
    await expect(client.appliance_create({ body: { name: 'web', version: '1' } })).rejects.toBeInstanceOf(ApiError);
    expect(posts(server)).toBe(1);
  });

  it('a POST whose connection is reset arrives exactly once', async () => {
    server = await startScripted((req) => req.socket.destroy());
    client = createClient({ url: server.url, auth, retry: fast });
    await expect(client.appliance_create({ body: { name: 'web', version: '1' } })).rejects.toBeInstanceOf(TransportError);
    expect(posts(server)).toBe(1);
  });

  it('an upload (POST) answered 503 or reset arrives exactly once', async () => {
    let opened = 0;
    server = await startScripted((req, res) => (server!.seen.length === 1 ? req.socket.destroy() : res.writeHead(503).end('busy')));
    client = createClient({ url: server.url, auth, retry: fast });
    const src = { open: () => (opened++, Readable.from([Buffer.from('abc')])), size: 3 };
    await expect(client.upload({ msid: 1, said: 2, fileName: 'a.txt' }, src)).rejects.toBeInstanceOf(TransportError);
    await expect(client.upload({ msid: 1, said: 2, fileName: 'a.txt' }, src)).rejects.toBeInstanceOf(HttpError);
    expect(posts(server)).toBe(2);
    expect(opened).toBe(2);
  });

  it('a GET is retried on 503 (honouring Retry-After), on reset and on 500, then succeeds', async () => {
    const script = ['503', 'reset', '500', 'ok'];
    const times: number[] = [];
    server = await startScripted((req, res) => {
      times.push(Date.now());
      const step = script[times.length - 1];
      if (step === '503') return void res.writeHead(503, { 'retry-after': '1', 'content-type': 'text/html' }).end('<h1>busy</h1>');
      if (step === 'reset') return void req.socket.destroy();
      if (step === '500') return replyError(res, 500, 'boom');
      reply(res, 200, 'appliance', { name: 'web' });
    });
    const delays: number[] = [];
    client = createClient({ url: server.url, auth, retry: { ...fast, maxAttempts: 5 }, onRetry: (i) => delays.push(i.delayMs) });
    expect(await client.appliance_get({ aid: 1 })).toEqual({ name: 'web' });
    expect(server.seen).toHaveLength(4);
    expect(delays[0]).toBe(1000);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
    expect(delays.slice(1).every((d) => d <= 20)).toBe(true);
  });

  it('gives up after maxAttempts and throws the last error', async () => {
    server = await startScripted((_req, res) => replyError(res, 502, 'bad gateway'));
    client = createClient({ url: server.url, auth, retry: { ...fast, maxAttempts: 3 } });
    const e = await client.appliance_delete({ aid: 1 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(502);
    expect(server.seen).toHaveLength(3);
  });

  it('a POST is retried when the connection was refused (nothing was sent)', async () => {
    const probe = await startScripted(() => undefined);
    const url = probe.url;
    await probe.close();
    const attempts: string[] = [];
    client = createClient({ url, auth, retry: { ...fast, maxAttempts: 3 }, onRetry: (i) => attempts.push(JSON.stringify(i.outcome)) });
    await expect(client.appliance_create({ body: { name: 'x' } })).rejects.toBeInstanceOf(TransportError);
    expect(attempts).toEqual(['{"failure":"connect"}', '{"failure":"connect"}']);
  });

  it('an abort during the backoff stops at once', async () => {
    server = await startScripted((_req, res) => res.writeHead(503, { 'retry-after': '30' }).end());
    client = createClient({ url: server.url, auth, retry: fast });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const t0 = Date.now();
    await expect(client.appliance_get({ aid: 1, signal: ac.signal })).rejects.toMatchObject({ code: 'E_ABORTED' });
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
