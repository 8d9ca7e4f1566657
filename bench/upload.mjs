// Upload throughput: the same file (BENCH_UPLOAD_MIB, default 1024 = 1 GiB, random bytes) through the
// client's streamed upload into the reference server, against a raw loopback copy (node:http request
// piping the file into a plain node:http sink that drops it), both servers as child processes,
// measured in the same run. Also the peak RSS of the client (this process) and of the server. The timed
// part ends at the upload's answer (its size, the file durable); a 1 GiB file's sha256sum and md5sum come
// after it (src/server/blobs/late-digests.ts), so the time until a GET of the artifact holds them is printed too.
// Build first: `npx tsc -p tsconfig.json && node bench/upload.mjs`.
import { execFileSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareServer, cpuMs, peakRssMiB, referenceServer, resetPeakRss, summary, threadCpuMs } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
const { createUser } = require('../dist/src/server/index.js');
const { createClient } = require('../dist/src/index.js');

const MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 1024);
const dir = mkdtempSync(join(tmpdir(), 'forge-bench-upload-'));
const file = join(dir, 'payload.bin');
{
  const fd = openSync(file, 'w');
  const buf = Buffer.alloc(8 * 1024 * 1024);
  for (let left = MIB * 1024 * 1024; left > 0; left -= buf.length) writeSync(fd, randomFillSync(buf), 0, Math.min(left, buf.length));
  closeSync(fd);
}
const size = statSync(file).size;
// The checksums the server must answer, from openssl (outside the timed part).
const expected = Object.fromEntries(['sha256', 'md5'].map((a) => [a, /= ([0-9a-f]+)\s*$/.exec(execFileSync('openssl', ['dgst', `-${a}`, file], { encoding: 'utf8' }))[1]]));
const mibps = (ms) => size / 1024 / 1024 / (ms / 1000);

function rawCopy(url) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-length': size, 'content-type': 'application/octet-stream' } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c)).on('end', () => (Number(body) === size ? resolve() : reject(new Error(`sink got ${body} bytes`))));
    });
    req.on('error', reject);
    createReadStream(file, { highWaterMark: 1024 * 1024 }).pipe(req);
  });
}

const bare = await bareServer();
const alice = await createUser(join(dir, 'data'), { login: 'alice' });
// No background catalog refresh: it would compete with the upload (and its memory is not the upload's).
const ref = await referenceServer(join(dir, 'data'), ['--no-catalog-refresh']);
const client = createClient({ url: ref.url, auth: alice, timeoutMs: 600_000 });
try {
  console.log(`upload bench: ${MIB} MiB of random bytes (node ${process.version})`);
  const rawOwn0 = process.cpuUsage();
  const sink0 = cpuMs(bare.proc.pid);
  let t0 = performance.now();
  await rawCopy(bare.url);
  const rawMs = performance.now() - t0;
  const rawOwn = process.cpuUsage(rawOwn0);
  const rawCpu = `client ${((rawOwn.user + rawOwn.system) / 1000).toFixed(0)} ms, sink ${cpuMs(bare.proc.pid) - sink0} ms`;
  const sw = await client.mySoftware_create({ uid: 'alice', body: { name: 'bench', version: '1' } });
  const art = await client.mySoftwareArtifact_add({ uid: 'alice', msid: String(sw.dbId), body: { kind: 'SoftwareFile', name: 'payload.bin' } });
  // The server's peak before the upload (its start: modules, the catalog) apart from the upload's own.
  const startRss = peakRssMiB(ref.proc.pid);
  resetPeakRss(ref.proc.pid);
  const threads0 = threadCpuMs(ref.proc.pid);
  const own0 = process.cpuUsage();
  t0 = performance.now();
  const done = await client.upload({ uid: 'alice', msid: String(sw.dbId), said: String(art.dbId), fileName: 'payload.bin' }, { file });
  const refMs = performance.now() - t0;
  const own = process.cpuUsage(own0);
  const threads = Object.entries(threadCpuMs(ref.proc.pid))
    .map(([k, v]) => [k, v - (threads0[k] ?? 0)])
    .filter(([, v]) => v >= 50)
    .sort((a, b) => b[1] - a[1]);
  // The record with its checksums: a GET of the artifact waits for them.
  const got = await client.mySoftwareArtifact_get({ uid: 'alice', msid: String(sw.dbId), said: String(art.dbId) });
  const sumsMs = performance.now() - t0 - refMs;
  if (done.size !== size || got.size !== size) throw new Error(`server stored ${done.size} bytes of ${size}`);
  if (got.sha256sum !== expected.sha256 || got.md5sum !== expected.md5) throw new Error(`server checksums ${got.sha256sum} ${got.md5sum} differ from openssl's ${expected.sha256} ${expected.md5}`);
  const clientRss = process.resourceUsage().maxRSS / 1024;
  const serverRss = peakRssMiB(ref.proc.pid);
  const ratio = mibps(refMs) / mibps(rawMs);
  console.log(`  raw loopback copy (node:http sink)      ${mibps(rawMs).toFixed(0).padStart(6)} MiB/s  (${rawMs.toFixed(0)} ms; CPU ${rawCpu})`);
  console.log(`  client.upload → reference server        ${mibps(refMs).toFixed(0).padStart(6)} MiB/s  (${refMs.toFixed(0)} ms to the answer: the file durable, its size checked)   ratio ${ratio.toFixed(2)}`);
  console.log(`  sha256sum and md5sum on the record ${sumsMs.toFixed(0)} ms after the answer (a GET of the artifact waits for them; checked against openssl)`);
  // Where the CPU went (what bounds the ratio on 2 cores): each thread of the server, this process (the client).
  console.log(`  CPU during the upload: server ${threads.map(([k, v]) => `${k} ${v} ms`).join(', ')}; client ${((own.user + own.system) / 1000).toFixed(0)} ms (user ${(own.user / 1000).toFixed(0)}, system ${(own.system / 1000).toFixed(0)})`);
  console.log(`  peak RSS: client ${clientRss.toFixed(0)} MiB, reference server ${serverRss.toFixed(0)} MiB during the upload (${startRss.toFixed(0)} MiB at its start) (file ${MIB} MiB)`);
  summary('upload', `${MIB} MiB upload MiB/s`, Math.round(mibps(refMs)), Math.round(mibps(rawMs)), ratio, `peak RSS client ${clientRss.toFixed(0)} MiB, server ${serverRss.toFixed(0)} MiB (${startRss.toFixed(0)} MiB at start); sha256sum and md5sum ${sumsMs.toFixed(0)} ms after the answer`);
} finally {
  await client.close();
  await ref.stop();
  await bare.stop();
  rmSync(dir, { recursive: true, force: true });
}
