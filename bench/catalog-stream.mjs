// The whole Debian catalog (`GET distributions/1/pkgs`, no query) in XML against the same answer in
// JSON, measured in the same run against the reference server as a child process; the server's RSS
// growth while answering; and the latency of a small signed GET while 3 whole-catalog XML answers
// stream. Build first: `npx tsc -p tsconfig.json && node bench/catalog-stream.mjs`.
// BENCH_CLI runs another build's command line (a "before" figure).
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { referenceServer, summary } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
const { createUser } = require('../dist/src/server/index.js');
const { signTarget } = require('../dist/src/auth/signer.js');

const REPS = Number(process.env.BENCH_REPS ?? 2);
const dir = mkdtempSync(join(tmpdir(), 'forge-bench-catalog-'));
const alice = await createUser(join(dir, 'data'), { login: 'alice' });
const ref = await referenceServer(join(dir, 'data'), ['--no-catalog-refresh']);
const base = new URL(ref.url);
const rssMiB = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${ref.proc.pid}/status`, 'utf8'))[1]) / 1024;

/** One signed GET read to its end: {ms, bytes, status}. */
function get(rel, accept) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(`${base.origin}${base.pathname}/${signTarget(rel, alice)}`, { headers: { accept } }, (res) => {
      let bytes = 0;
      let tail = '';
      res.on('data', (c) => {
        bytes += c.length;
        tail = (tail + c.toString('latin1')).slice(-64);
      });
      res.on('end', () => resolve({ ms: performance.now() - t0, bytes, status: res.statusCode, tail }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function whole(accept) {
  let best = Infinity;
  let r;
  for (let i = 0; i < REPS; i++) {
    r = await get('distributions/1/pkgs', accept);
    if (r.status !== 200) throw new Error(`${accept}: status ${r.status}`);
    best = Math.min(best, r.ms);
  }
  return { ms: best, bytes: r.bytes, tail: r.tail };
}

try {
  // Warm-up: routes compiled, and the whole catalog loaded (a start reads only its index; any search but an exact
  // name reads it whole), so the growth below is the answers' own memory.
  await get('users/alice', 'application/xml');
  await get('distributions/1/pkgs?count=1', 'application/xml');
  const rss0 = rssMiB();
  let rssPeak = rss0;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB())), 20);
  const json = await whole('application/json');
  const xml = await whole('application/xml');
  if (!xml.tail.trimEnd().endsWith('</ns0:packages>')) throw new Error(`XML answer ends with ${xml.tail}`);

  // A small signed GET, one after the other, while 3 whole-catalog XML answers stream.
  const lat = [];
  let streaming = true;
  const streams = Promise.all([0, 1, 2].map(() => get('distributions/1/pkgs', 'application/xml'))).then((r) => ((streaming = false), r));
  while (streaming) lat.push((await get('users/alice', 'application/xml')).ms);
  await streams;
  clearInterval(sampler);
  lat.sort((a, b) => a - b);
  const p = (q) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))];

  const ratio = xml.ms / json.ms;
  console.log(`whole catalog (node ${process.version}): XML ${(xml.bytes / 2 ** 20).toFixed(1)} MiB in ${xml.ms.toFixed(0)} ms, JSON ${(json.bytes / 2 ** 20).toFixed(1)} MiB in ${json.ms.toFixed(0)} ms: XML ${ratio.toFixed(2)}× the JSON time (target ≤ 1.5 s and ≤ 1.2×)`);
  console.log(`  server RSS ${rss0.toFixed(0)} MiB before, ${rssPeak.toFixed(0)} MiB at most while answering: growth ${(rssPeak - rss0).toFixed(0)} MiB (target ≤ 100 MiB)`);
  console.log(`  small signed GET while 3 whole-catalog XML answers stream: ${lat.length} requests, p50 ${p(0.5).toFixed(1)} ms, p99 ${p(0.99).toFixed(1)} ms, max ${lat.at(-1).toFixed(1)} ms (target p99 < 50 ms)`);
  summary('catalog-stream', 'whole catalog XML ms', Math.round(xml.ms), Math.round(json.ms), ratio, `baseline: the same in JSON; RSS growth ${(rssPeak - rss0).toFixed(0)} MiB`);
  summary('catalog-stream', 'small GET p99 ms during 3 catalog streams', Number(p(0.99).toFixed(1)), '', '', `${lat.length} requests, max ${lat.at(-1).toFixed(1)} ms`);
} finally {
  await ref.stop();
  rmSync(dir, { recursive: true, force: true });
}
