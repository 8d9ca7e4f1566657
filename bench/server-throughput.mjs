// Signed GET and signed list throughput of the reference server against a bare node:http server
// answering the same bytes, both as child processes on 127.0.0.1, autocannon from this process,
// measured in the same run. Build first: `npx tsc -p tsconfig.json && node bench/server-throughput.mjs`.
// BENCH_SECONDS (default 5) per measurement, 10 connections.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareServer, referenceServer, summary } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
const autocannon = require('autocannon');
const { createUser } = require('../dist/src/server/index.js');
const { signTarget } = require('../dist/src/auth/signer.js');
const { createClient } = require('../dist/src/index.js');

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 10;
const dir = mkdtempSync(join(tmpdir(), 'forge-bench-http-'));
const alice = await createUser(join(dir, 'data'), { login: 'alice' });
const ref = await referenceServer(join(dir, 'data'), ['--no-catalog-refresh']);
const client = createClient({ url: ref.url, auth: alice });
const apps = [];
for (let i = 0; i < 50; i++) apps.push(await client.appliance_create({ uid: 'alice', body: { name: `app-${i}`, version: '1', distributionUri: 'distributions/1' } }));
await client.close();

const base = new URL(ref.url);
// The targets: one appliance, a list of 50; the user record as a lighter reference point.
const targets = { get: `users/alice/appliances/${apps[0].dbId}`, user: 'users/alice', list: 'users/alice/appliances?count=50' };
const routes = {};
for (const [k, rel] of Object.entries(targets)) {
  const res = await fetch(`${ref.url}/${signTarget(rel, alice)}`);
  const file = join(dir, `${k}.xml`);
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  routes[`/${k}`] = { file, type: res.headers.get('content-type') };
}
const bare = await bareServer(routes);

// BENCH_REPLAY=1: one signed URL sent again and again (the server's capacity alone; the client does
// next to nothing). Default, the measure: the client signs each request afresh, an HMAC per
// request as a real client does, for both servers.
const REPLAY = process.env.BENCH_REPLAY === '1';
async function rps(origin, prefix, rel, warmUp = false) {
  // The reference server's first seconds compile its hot paths: a short run, not counted, first.
  if (warmUp) await autocannon({ url: origin, connections: CONNECTIONS, duration: 1, requests: [{ method: 'GET', path: `${prefix}${signTarget(rel, alice)}` }] });
  const r = await autocannon({
    url: origin,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [REPLAY ? { method: 'GET', path: `${prefix}${signTarget(rel, alice)}` } : { method: 'GET', setupRequest: (req) => ({ ...req, path: `${prefix}${signTarget(rel, alice)}` }) }],
  });
  if (r.non2xx || r.errors) throw new Error(`${origin}${prefix}${rel}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

console.log(`server throughput: ${SECONDS} s each, ${CONNECTIONS} connections, node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}`);
try {
  for (const [k, rel] of Object.entries(targets)) {
    const r = await rps(base.origin, `${base.pathname}/`, rel, true);
    // The bare server answers by path alone: the signed target rides in its query, same length, same HMAC.
    const b = await rps(new URL(bare.url).origin, `/${k}?`, rel);
    const ratio = r.rps / b.rps;
    console.log(
      `  signed ${k.padEnd(5)} reference ${r.rps.toFixed(0).padStart(7)} req/s (p50 ${r.p50} ms, p99 ${r.p99} ms)   bare node:http ${b.rps.toFixed(0).padStart(7)} req/s   ratio ${ratio.toFixed(2)}`,
    );
    summary('server-throughput', `signed ${k} req/s`, Math.round(r.rps), Math.round(b.rps), ratio, `p99 ${r.p99} ms vs ${b.p99} ms`);
  }
} finally {
  await ref.stop();
  await bare.stop();
  rmSync(dir, { recursive: true, force: true });
}
