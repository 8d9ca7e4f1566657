// Signed GET and signed list throughput of the reference server against a bare node:http server
// answering the same bytes, both as child processes on 127.0.0.1, autocannon from this process,
// measured in the same run. Build first: `npx tsc -p tsconfig.json && node bench/server-throughput.mjs`.
// BENCH_SECONDS (default 5) per measurement, in one-second turns of each server, 10 connections.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareServer, cpuMs, referenceServer, summary } from './lib/servers.mjs';

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
const allTargets = { get: `users/alice/appliances/${apps[0].dbId}`, user: 'users/alice', list: 'users/alice/appliances?count=50' };
// BENCH_ONLY=get,list: some of them (a profile of one, a quick before/after).
const only = process.env.BENCH_ONLY?.split(',');
const targets = Object.fromEntries(Object.entries(allTargets).filter(([k]) => !only || only.includes(k)));
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
// One slice of `seconds` against a server: answers, latency percentiles, and CPU (user + system, all
// threads) of that server and of this process (autocannon and the signing). On 2 cores the client
// shares the CPU, so what the server spends per answer is the figure to lower.
async function slice(server, origin, prefix, rel, seconds) {
  const cpu0 = cpuMs(server.proc.pid);
  const own0 = process.cpuUsage();
  const r = await autocannon({
    url: origin,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [REPLAY ? { method: 'GET', path: `${prefix}${signTarget(rel, alice)}` } : { method: 'GET', setupRequest: (req) => ({ ...req, path: `${prefix}${signTarget(rel, alice)}` }) }],
  });
  if (r.non2xx || r.errors) throw new Error(`${origin}${prefix}${rel}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  const own = process.cpuUsage(own0);
  return { answers: r.requests.total, seconds, p50: r.latency.p50, p99: r.latency.p99, cpuMs: cpuMs(server.proc.pid) - cpu0, clientMs: (own.user + own.system) / 1000 };
}

/** Slices summed: answers per second, the median slice's p50/p99, CPU µs per answer. */
function total(slices) {
  const sum = (f) => slices.reduce((a, x) => a + f(x), 0);
  const answers = sum((x) => x.answers);
  const median = (f) => slices.map(f).sort((a, b) => a - b)[Math.floor(slices.length / 2)];
  const perAnswer = (ms) => ((ms * 1000) / answers).toFixed(0);
  return { rps: answers / sum((x) => x.seconds), p50: median((x) => x.p50), p99: median((x) => x.p99), cpu: perAnswer(sum((x) => x.cpuMs)), client: perAnswer(sum((x) => x.clientMs)) };
}

// The two servers take turns, one-second slices (A, B, A, B…), so that a change of load on a shared
// machine weighs on both alike.
const SLICE = 1;
console.log(`server throughput: ${SECONDS} s each in ${SLICE} s turns, ${CONNECTIONS} connections, node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}`);
try {
  for (const [k, rel] of Object.entries(targets)) {
    // The reference server's first seconds compile its hot paths: a short run, not counted, first.
    await autocannon({ url: base.origin, connections: CONNECTIONS, duration: 1, requests: [{ method: 'GET', path: `${base.pathname}/${signTarget(rel, alice)}` }] });
    const rs = [];
    const bs = [];
    for (let t = 0; t < SECONDS / SLICE; t++) {
      rs.push(await slice(ref, base.origin, `${base.pathname}/`, rel, SLICE));
      // The bare server answers by path alone: the signed target rides in its query, same length, same HMAC.
      bs.push(await slice(bare, new URL(bare.url).origin, `/${k}?`, rel, SLICE));
    }
    const r = total(rs);
    const b = total(bs);
    const ratio = r.rps / b.rps;
    console.log(
      `  signed ${k.padEnd(5)} reference ${r.rps.toFixed(0).padStart(7)} req/s (p50 ${r.p50} ms, p99 ${r.p99} ms)   bare node:http ${b.rps.toFixed(0).padStart(7)} req/s   ratio ${ratio.toFixed(2)}`,
    );
    console.log(`        CPU per answer: reference ${r.cpu} µs, bare ${b.cpu} µs; this process (client) ${r.client} / ${b.client} µs`);
    summary('server-throughput', `signed ${k} req/s`, Math.round(r.rps), Math.round(b.rps), ratio, `p99 ${r.p99} ms vs ${b.p99} ms; server CPU ${r.cpu} vs ${b.cpu} µs per answer`);
  }
} finally {
  await ref.stop();
  await bare.stop();
  rmSync(dir, { recursive: true, force: true });
}
