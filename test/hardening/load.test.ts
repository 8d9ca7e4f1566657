// Bounded load on 127.0.0.1 (autocannon, programmatic): 20 users, mixed signed reads (user, list)
// and writes (a new software component each), against the server as a child process. Zero 5xx,
// zero errors, zero lost writes: every 201 the load saw is counted afterwards through the API.
// p50/p99 are printed, never asserted. ~3 s in `npm test`, 10 s with APPLIANCE_FORGE_LONG=1.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTarget } from '../../src/auth/signer';
import { createUser, type CreatedUser } from '../../src/server';
import { spawnServer, type ChildServer } from './support/child-server';
import { healthy, LONG, sendSigned, tempDir } from './support/harness';

const USERS = 20;
const DURATION_S = LONG ? 10 : 3;
const MAX_REQUESTS = LONG ? 200_000 : 60_000; // a count bound as well as a time bound

interface Req {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?(req: Req, ctx: Record<string, unknown>): Req;
  onResponse?(status: number, body: string, ctx: Record<string, unknown>): void;
}
interface Result {
  requests: { total: number };
  latency: { p50: number; p99: number; average: number };
  statusCodeStats: Record<string, { count: number }>;
  errors: number;
  timeouts: number;
}
type Autocannon = (o: Record<string, unknown>) => Promise<Result>;
const autocannon = createRequire(__filename)('autocannon') as Autocannon;

describe('load: 20 users, mixed signed reads and writes', () => {
  let srv: ChildServer;
  const users: CreatedUser[] = [];

  beforeAll(async () => {
    const dataDir = tempDir('forge-load-');
    for (let i = 0; i < USERS; i++) users.push(await createUser(dataDir, { login: `u${i}` }));
    srv = await spawnServer(dataDir);
  });
  afterAll(async () => srv?.stop());

  it('zero 5xx, zero errors, zero lost writes', async () => {
    const base = new URL(srv.url);
    const signed = (u: CreatedUser, rel: string) => `${base.pathname}/${signTarget(rel, u)}`;
    const paths = users.map((u) => ({
      user: signed(u, `users/${u.login}`),
      list: signed(u, `users/${u.login}/mysoftware?count=5`),
      create: signed(u, `users/${u.login}/mysoftware`),
    }));
    let next = 0;
    let seq = 0;
    const created = new Map<string, number>();
    const requests: Req[] = [
      {
        method: 'GET',
        setupRequest: (req, ctx) => {
          ctx.u = next++ % USERS;
          return { ...req, path: paths[ctx.u as number]!.user };
        },
      },
      { method: 'GET', setupRequest: (req, ctx) => ({ ...req, path: paths[ctx.u as number]!.list }) },
      {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        setupRequest: (req, ctx) => ({ ...req, path: paths[ctx.u as number]!.create, body: `<mySoftware><name>load-${seq++}</name><version>1</version></mySoftware>` }),
        onResponse: (status, _body, ctx) => {
          if (status === 201) created.set(`u${ctx.u as number}`, (created.get(`u${ctx.u as number}`) ?? 0) + 1);
        },
      },
      { method: 'GET', setupRequest: (req, ctx) => ({ ...req, path: paths[ctx.u as number]!.list, headers: { accept: 'application/json' } }) },
    ];
    const result = await autocannon({
      url: base.origin,
      connections: USERS,
      duration: DURATION_S,
      maxOverallRequests: MAX_REQUESTS,
      timeout: 20,
      requests,
    });
    const byStatus = Object.fromEntries(Object.entries(result.statusCodeStats).map(([k, v]) => [k, v.count]));
    const fivexx = Object.entries(byStatus).filter(([k]) => Number(k) >= 500).reduce((n, [, c]) => n + c, 0);
    const writes = [...created.values()].reduce((a, b) => a + b, 0);

    // Lost writes: what the API lists afterwards, per user, against the 201s the load was given.
    let listed = 0;
    const lost: string[] = [];
    for (const u of users) {
      const r = await sendSigned(srv.url, 'GET', `users/${u.login}/mysoftware?count=1`, { user: u, headers: { accept: 'application/json' } });
      const total = (JSON.parse(r.text) as { mySoftwareList: { total: number } }).mySoftwareList.total;
      listed += total;
      // More listed than acknowledged is fine: a POST still in flight when the load stopped (≤ 1 per connection).
      if (total < (created.get(u.login) ?? 0)) lost.push(`${u.login}: acknowledged ${created.get(u.login) ?? 0}, listed ${total}`);
    }
    console.log(
      `[hardening] load (${DURATION_S} s, ${USERS} users): ${result.requests.total} requests, statuses ${JSON.stringify(byStatus)}, ` +
        `5xx ${fivexx}, errors ${result.errors}, timeouts ${result.timeouts}, writes acknowledged ${writes}, listed ${listed}, ` +
        `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
    );
    expect(result.requests.total).toBeGreaterThan(USERS * 4);
    expect(fivexx).toBe(0);
    expect(result.errors + result.timeouts).toBe(0);
    expect(Object.keys(byStatus).filter((k) => !['200', '201'].includes(k))).toEqual([]);
    expect(writes).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(listed - writes).toBeLessThanOrEqual(USERS);
    expect(await healthy(srv.url)).toBe(true);
  });
});
