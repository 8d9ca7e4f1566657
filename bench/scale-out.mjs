// A build farm's figures (docs/benchmarks.md "Build farm"), all on 127.0.0.1 with the real parts: the
// loopback PostgreSQL 15 and Swift's S3 (../shared), an API node in this process, worker processes.
//  1. Fake builds (bench/lib/fake-worker.mjs: sleep FAKE_SECONDS, then a FAKE_MIB image stored in the
//     bucket) at 1, 2, 4 and 8 workers: throughput against linear (n × the one worker's, same run) in rounds of
//     n jobs (each waits for its slowest) and with a full queue of ROUNDS × n jobs, the claim latency (a job's
//     created_on to its started_on in pg-boss, in the rounds), and whether any image got two results.
//  2. Real builds (warm OS layer cache) at 1 and 2 workers: what two cores give.
//  3. A worker killed during the build, during the upload and between the upload and the commit:
//     the time from the kill to the image's completion by another worker.
//  4. A signed GET of an appliance on an API node over PostgreSQL against the embedded server (SQLite).
//  5. A shared OS layer restored from the bucket against the cold build of the same layer.
// Build first (`npx tsc -p tsconfig.json`); root, for the services' start scripts. BENCH_PARTS=1,4 runs some.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { CLI, cpuMs, summary } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
const autocannon = require('autocannon');
const { startServer, createUser } = require('../dist/src/server/index.js');
const { createClient } = require('../dist/src/index.js');
const { signTarget } = require('../dist/src/auth/signer.js');

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SHARED = join(ROOT, '..', 'shared');
const PARTS = new Set((process.env.BENCH_PARTS ?? '1,2,3,4,5').split(','));
const FAKE_SECONDS = Number(process.env.FAKE_SECONDS ?? 10);
const FAKE_MIB = Number(process.env.FAKE_MIB ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const work = mkdtempSync(join(tmpdir(), 'forge-bench-farm-'));

const run = (cmd, args) => new Promise((resolve, reject) => {
  const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (c) => (out += c));
  p.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')}: exit ${code}`))));
});
const envOf = (file) => Object.fromEntries([...require('node:fs').readFileSync(file, 'utf8').matchAll(/^export ([A-Z0-9_]+)=(.*)$/gm)].map(([, k, v]) => [k, v.replace(/^'(.*)'$/, '$1')]));
const pgEnv = envOf((await run('bash', [join(SHARED, 'postgres/start-postgres.sh')])).trim().split('\n').pop());
const s3Env = envOf((await run('bash', [join(SHARED, 's3/start-s3.sh')])).trim().split('\n').pop());
for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REQUEST_CHECKSUM_CALCULATION', 'AWS_RESPONSE_CHECKSUM_VALIDATION']) process.env[k] = s3Env[k];

async function query(url, text, values = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** Deletes what a farm left under its bucket prefix: the runs leave GiBs of images, and Swift refuses writes near a full disk. */
async function removePrefix(prefix) {
  const { S3Client, ListObjectsV2Command, DeleteObjectsCommand, ListMultipartUploadsCommand, AbortMultipartUploadCommand } = require('@aws-sdk/client-s3');
  const s3 = new S3Client({ endpoint: s3Env.S3_ENDPOINT, region: s3Env.S3_REGION, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  const Bucket = s3Env.S3_BUCKET;
  try {
    for (const u of (await s3.send(new ListMultipartUploadsCommand({ Bucket, Prefix: `${prefix}/` }))).Uploads ?? []) {
      await s3.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key, UploadId: u.UploadId }));
    }
    for (let round = 0; round < 1000; round++) {
      const keys = ((await s3.send(new ListObjectsV2Command({ Bucket, Prefix: `${prefix}/` }))).Contents ?? []).map((o) => ({ Key: o.Key }));
      if (keys.length === 0) break;
      await s3.send(new DeleteObjectsCommand({ Bucket, ChecksumAlgorithm: 'MD5', Delete: { Objects: keys, Quiet: true } }));
    }
  } finally {
    s3.destroy();
  }
}

/** A farm of its own: a fresh database and bucket prefix, one secret key, an API node here. */
async function farm(name) {
  const db = `af_bench_${name.replace(/\W/g, '_')}_${randomBytes(3).toString('hex')}`;
  await query(pgEnv.DATABASE_URL, `CREATE DATABASE ${db}`);
  const u = new URL(pgEnv.DATABASE_URL);
  u.pathname = `/${db}`;
  const databaseUrl = u.toString();
  const prefix = `bench-${name}-${randomBytes(3).toString('hex')}`;
  const blobStore = `s3://${s3Env.S3_BUCKET}/${prefix}?endpoint=${encodeURIComponent(s3Env.S3_ENDPOINT)}&region=${s3Env.S3_REGION}&path-style=true`;
  const dir = mkdtempSync(join(work, `${name}-`));
  const secretKeyFile = join(dir, 'secret.key');
  writeFileSync(secretKeyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  const node = { databaseUrl, blobStore, secretKeyFile };
  const limits = { jobsPerUser: 200, jobsTotal: 400, imagesPerUser: 400 };
  const api = await startServer({ role: 'api', port: 0, dataDir: join(dir, 'api'), ...node, limits });
  const workers = [];
  const startWorker = (fake) => {
    const wdir = join(dir, `w${workers.length}`);
    const args = fake
      ? [join(ROOT, 'bench/lib/fake-worker.mjs'), JSON.stringify({ ...node, dataDir: wdir })]
      : [CLI, 'serve', '--role', 'worker', '--data-dir', wdir, '--database-url', databaseUrl, '--blob-store', blobStore, '--secret-key-file', secretKeyFile, '-q'];
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FAKE_SECONDS: String(FAKE_SECONDS), FAKE_MIB: String(FAKE_MIB) } });
    const w = { proc, lines: [] };
    const take = (c) => w.lines.push(...String(c).split('\n').filter(Boolean));
    proc.stdout.on('data', take);
    proc.stderr.on('data', take);
    w.ready = new Promise((resolve, reject) => {
      const t = setInterval(() => w.lines.some((l) => /^ready |serve: role worker/.test(l)) && (clearInterval(t), resolve()), 50);
      proc.once('exit', (code) => (clearInterval(t), reject(new Error(`worker exited ${code}: ${w.lines.join('\n')}`))));
    });
    w.ready.catch(() => undefined);
    w.stop = (sig = 'SIGTERM') => new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r() : (proc.once('exit', r), proc.kill(sig))));
    workers.push(w);
    return w;
  };
  const users = [];
  for (const login of ['alice', 'bob', 'carol', 'dave']) {
    const k = await createUser(join(dir, 'api'), { login, ...node });
    users.push({ login, client: createClient({ url: api.url, auth: k, retry: false }), key: k });
  }
  return {
    databaseUrl, api, users, workers, startWorker, node,
    async close() {
      await Promise.all(workers.map((w) => w.stop()));
      for (const u of users) await u.client.close();
      await api.close();
      await query(pgEnv.DATABASE_URL, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await removePrefix(prefix);
    },
  };
}

/** A template with the Minimal profile (and nginx when `nginx`) of `user`. */
async function template(user, name, nginx = false) {
  const c = user.client;
  const app = await c.appliance_create({ uid: user.login, body: { name, version: '1', distributionUri: 'distributions/1', installProfile: { diskSize: 1024 } } });
  const p = await c.applianceOSProfile_create({ uid: user.login, aid: app.dbId, body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: 'distributions/1/profiles/1' } });
  if (nginx) {
    const pkg = (await c.osPkg_getAll({ id: 1, params: { query: 'name==nginx;arch==amd64' } })).pkgs[0];
    await c.applianceOSProfilePkg_updateAll({ uid: user.login, aid: app.dbId, osid: p.dbId, body: { addedPkgUris: [pkg.uri] } });
  }
  return { user, aid: app.dbId };
}

/**
 * The baseline of the bucket alone, same run: `n` uploads of FAKE_MIB random bytes at once, straight through
 * the SDK's lib-storage (no worker, no queue, no database). On one machine the S3 service (Swift, in Python)
 * shares the cores with the workers, so n workers' images cannot arrive faster than this.
 */
async function s3Alone(n) {
  const { S3Client, DeleteObjectsCommand } = require('@aws-sdk/client-s3');
  const { Upload } = require('@aws-sdk/lib-storage');
  const s3 = new S3Client({ endpoint: s3Env.S3_ENDPOINT, region: s3Env.S3_REGION, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  const prefix = `bench-s3alone-${randomBytes(3).toString('hex')}`;
  const bodies = Array.from({ length: n }, () => randomBytes(FAKE_MIB * 1024 * 1024));
  try {
    const t0 = performance.now();
    await Promise.all(bodies.map((Body, i) => new Upload({ client: s3, params: { Bucket: s3Env.S3_BUCKET, Key: `${prefix}/${i}`, Body }, partSize: 16 * 1024 * 1024, queueSize: 2 }).done()));
    return (performance.now() - t0) / 1000;
  } finally {
    await s3.send(new DeleteObjectsCommand({ Bucket: s3Env.S3_BUCKET, ChecksumAlgorithm: 'MD5', Delete: { Objects: bodies.map((_, i) => ({ Key: `${prefix}/${i}` })), Quiet: true } }));
    s3.destroy();
  }
}

const FORMATS = ['QCOW2', 'Raw Virtual Disk', 'VHD', 'VMware', 'VirtualBox'];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** Generate `jobs` images at once (distinct template and format each), wait for all: their ids and the wall time. */
async function round(f, templates, jobs, offset) {
  const t0 = performance.now();
  const made = await Promise.all(Array.from({ length: jobs }, async (_, i) => {
    const t = templates[(offset + i) % templates.length];
    const format = FORMATS[Math.floor((offset + i) / templates.length) % FORMATS.length];
    const img = await t.user.client.machineImage_generate({ uid: t.user.login, aid: t.aid, body: { targetFormat: { name: format } } });
    return { t, itid: img.dbId };
  }));
  for (const m of made) {
    const s = await m.t.user.client.waitForJob(`users/${m.t.user.login}/appliances/${m.t.aid}/images/${m.itid}`, { timeoutMs: 1_800_000, pollMs: 200, maxPollMs: 200 });
    if (!s.complete) throw new Error(`image ${m.itid} ended ${JSON.stringify(s)}`);
  }
  return { ids: made.map((m) => m.itid), seconds: (performance.now() - t0) / 1000 };
}

console.log(`scale-out: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}; fake builds of ${FAKE_SECONDS} s + ${FAKE_MIB} MiB, ${ROUNDS} rounds`);
const rows = [];
try {
  if (PARTS.has('1')) {
    let one;
    let oneQueue;
    let oneRound; // the one worker's round time less its upload: what a round costs besides the bucket
    for (const n of [1, 2, 4, 8]) {
      const f = await farm(`fake${n}`);
      try {
        for (let i = 0; i < n; i++) f.startWorker(true);
        await Promise.all(f.workers.map((w) => w.ready));
        const templates = [];
        for (const [i, u] of f.users.entries()) for (let k = 0; k < 3; k++) templates.push(await template(u, `fake-${i}-${k}`));
        let seconds = 0;
        const ids = [];
        for (let r = 0; r < ROUNDS; r++) {
          const x = await round(f, templates, n, r * n);
          seconds += x.seconds;
          ids.push(...x.ids);
        }
        // Claim latency from the rounds alone: in the full queue below a job waits for a free worker too.
        const jobs = await query(f.databaseUrl, "SELECT extract(epoch FROM started_on - created_on) * 1000 AS ms, retry_count FROM pgboss.job WHERE name = 'appliance-forge-builds'");
        const claims = jobs.map((j) => Number(j.ms));
        // A full queue (what a farm's throughput is): ROUNDS × n jobs at once, no barrier between rounds, so a
        // worker takes its next job when its last one is stored rather than when the slowest of the round is.
        const q = await round(f, templates, ROUNDS * n, ROUNDS * n);
        ids.push(...q.ids);
        const qRate = q.ids.length / q.seconds;
        oneQueue ??= qRate;
        const qRatio = qRate / (n * oneQueue);
        // One result per image: one image object per image (and its two SBOMs), no job ended twice.
        const ended = f.workers.flatMap((w) => w.lines.filter((l) => / ended on /.test(l)).map((l) => JSON.parse(l).record));
        const twice = ended.length - new Set(ended).size;
        const docs = await query(f.databaseUrl, "SELECT doc FROM appliance_forge.records WHERE kind = 'image'");
        const complete = docs.filter((d) => JSON.parse(d.doc).status.complete).length;
        const rate = (ids.length - q.ids.length) / seconds;
        one ??= rate;
        const ratio = rate / (n * one);
        // The bucket-bound linear: each round as long as the one worker's, but for the bucket taking n images at once.
        const alone = await s3Alone(n);
        oneRound ??= seconds / ROUNDS - alone;
        const bound = n / (oneRound + alone);
        const boundRatio = rate / Math.min(bound, n * one);
        rows.push([`fake builds, ${n} worker${n > 1 ? 's' : ''}`, `${rate.toFixed(3)} builds/s`, `${(n * one).toFixed(3)} (linear)`, ratio.toFixed(2), `claim p50 ${pct(claims, 50).toFixed(0)} ms, p99 ${pct(claims, 99).toFixed(0)} ms; ${complete}/${ids.length} complete; ${twice} ended twice; a full queue of ${q.ids.length}: ${qRate.toFixed(3)} builds/s, ${qRatio.toFixed(2)} of linear; the bucket alone took ${n} × ${FAKE_MIB} MiB in ${alone.toFixed(1)} s: ${boundRatio.toFixed(2)} of the bucket-bound linear`]);
        summary('scale-out', `fake builds/s, ${n} workers`, Number(rate.toFixed(3)), Number((n * one).toFixed(3)), Number(ratio.toFixed(2)), `claim p99 ${pct(claims, 99).toFixed(0)} ms; ${twice} double results; full queue ${qRatio.toFixed(2)} of linear; ${boundRatio.toFixed(2)} of the bucket-bound linear (${n} × ${FAKE_MIB} MiB alone: ${alone.toFixed(1)} s)`);
      } finally {
        await f.close();
      }
    }
  }

  if (PARTS.has('2')) {
    const rates = {};
    for (const n of [2, 1]) {
      const f = await farm(`real${n}`);
      try {
        for (let i = 0; i < n; i++) f.startWorker(false);
        await Promise.all(f.workers.map((w) => w.ready));
        const t = await template(f.users[0], 'real', true);
        // Warm both OS layers (not counted): QCOW2 takes the cloud kernel's, VMware the generic one's
        // (imaging/recipe.ts kernelFor), and the four builds below are Raw, VHD, VMware and VirtualBox.
        // On a template of their own with the same packages, so no measured build repeats one of these.
        const warm = await template(f.users[0], 'warm', true);
        await round(f, [warm], 1, 0);
        await round(f, [warm], 1, 3);
        const x = await round(f, [t], 4, 1);
        rates[n] = 4 / x.seconds;
      } finally {
        await f.close();
      }
    }
    // Two workers run first: whatever a build leaves warm (base disks) favours the one worker, not the two.
    for (const n of [1, 2]) {
      rows.push([`real builds, ${n} worker${n > 1 ? 's' : ''}`, `${(4 / rates[n]).toFixed(1)} s for 4`, n === 1 ? '' : `${(4 / rates[1]).toFixed(1)} s (1 worker)`, n === 1 ? '' : (rates[2] / rates[1]).toFixed(2), 'warm OS layer, Minimal + nginx, 1 GiB disks']);
    }
    summary('scale-out', 'real builds/min, 2 workers', Number((rates[2] * 60).toFixed(2)), Number((rates[1] * 60).toFixed(2)), Number((rates[2] / rates[1]).toFixed(2)), '4 builds, warm layer');
  }

  if (PARTS.has('3')) {
    for (const stage of ['build', 'upload', 'commit']) {
      const f = await farm(`kill-${stage}`);
      try {
        f.startWorker(true);
        f.startWorker(true);
        await Promise.all(f.workers.map((w) => w.ready));
        const t = await template(f.users[0], 'killed');
        const c = f.users[0].client;
        const img = await c.machineImage_generate({ uid: 'alice', aid: t.aid, body: { targetFormat: { name: 'QCOW2' } } });
        const record = `image:${img.dbId}`;
        const until = async (fn, ms = 300_000) => {
          const end = Date.now() + ms;
          for (;;) {
            const v = await fn();
            if (v) return v;
            if (Date.now() > end) throw new Error(`${stage}: not within ${ms} ms`);
            await new Promise((r) => setTimeout(r, 20));
          }
        };
        const victim = await until(() => f.workers.find((w) => w.lines.some((l) => l.includes(`job ${record} claimed`))));
        const prefix = `${new URL(f.node.blobStore).pathname.slice(1)}/images/`;
        const s3 = new (require('@aws-sdk/client-s3').S3Client)({ endpoint: s3Env.S3_ENDPOINT, region: s3Env.S3_REGION, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
        const { ListMultipartUploadsCommand, ListObjectsV2Command } = require('@aws-sdk/client-s3');
        const bucket = s3Env.S3_BUCKET;
        if (stage === 'build') await new Promise((r) => setTimeout(r, 2000));
        if (stage === 'upload') await until(async () => ((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }))).Uploads ?? []).length > 0);
        if (stage === 'commit') {
          await until(async () => ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).some((o) => o.Key.endsWith('.qcow2')));
          victim.proc.kill('SIGSTOP');
        }
        const before = await c.machineImageStatus_get({ uid: 'alice', aid: t.aid, itid: img.dbId });
        const killed = performance.now();
        victim.proc.kill('SIGKILL');
        const done = await c.waitForJob(`users/alice/appliances/${t.aid}/images/${img.dbId}`, { timeoutMs: 600_000, pollMs: 100, maxPollMs: 100 });
        const seconds = (performance.now() - killed) / 1000;
        const images = ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).filter((o) => o.Key.endsWith('.qcow2')).length;
        s3.destroy();
        rows.push([`worker killed: ${stage === 'commit' ? 'between upload and commit' : `during the ${stage}`}`, `${seconds.toFixed(1)} s to completion`, '', '', `${before.percentage}% when killed (${before.complete ? 'complete' : 'not complete'}); ${done.complete ? 'completed' : 'NOT completed'} by the other worker; ${images} image object(s) now`]);
        summary('scale-out', `kill ${stage} → complete, s`, Number(seconds.toFixed(1)), '', '', `${images} image object(s)`);
      } finally {
        await f.close();
      }
    }
  }

  if (PARTS.has('4')) {
    const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
    const f = await farm('http');
    const sqliteDir = join(work, 'sqlite');
    const alice = await createUser(sqliteDir, { login: 'alice' });
    const child = (args) => new Promise((resolve, reject) => {
      const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--no-catalog-refresh', '-q', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
      let buf = '';
      proc.stdout.on('data', (c) => {
        buf += c;
        const line = buf.split('\n').find((l) => l.startsWith('http://'));
        if (line) resolve({ url: line.trim(), proc });
      });
      proc.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
    });
    const servers = {
      sqlite: { ...(await child(['--data-dir', sqliteDir])), key: alice },
      postgres: { ...(await child(['--role', 'api', '--data-dir', join(work, 'pg-api'), '--database-url', f.databaseUrl, '--blob-store', f.node.blobStore, '--secret-key-file', f.node.secretKeyFile])), key: f.users[0].key },
    };
    const rel = {};
    for (const [k, s] of Object.entries(servers)) {
      const c = createClient({ url: s.url, auth: s.key });
      const app = await c.appliance_create({ uid: 'alice', body: { name: 'get', version: '1', distributionUri: 'distributions/1' } });
      rel[k] = `users/alice/appliances/${app.dbId}`;
      await c.close();
    }
    const slice = async (k, seconds) => {
      const s = servers[k];
      const u = new URL(s.url);
      const cpu0 = cpuMs(s.proc.pid);
      const r = await autocannon({ url: u.origin, connections: 10, duration: seconds, requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `${u.pathname}/${signTarget(rel[k], s.key)}` }) }] });
      if (r.non2xx || r.errors) throw new Error(`${k}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      return { answers: r.requests.total, seconds, cpu: cpuMs(s.proc.pid) - cpu0, p99: r.latency.p99 };
    };
    for (const k of Object.keys(servers)) await slice(k, 1);
    const acc = { sqlite: [], postgres: [] };
    for (let i = 0; i < SECONDS; i++) for (const k of Object.keys(servers)) acc[k].push(await slice(k, 1));
    const rps = (k) => acc[k].reduce((n, x) => n + x.answers, 0) / acc[k].reduce((n, x) => n + x.seconds, 0);
    const ratio = rps('postgres') / rps('sqlite');
    rows.push(['signed GET of an appliance', `${rps('postgres').toFixed(0)} req/s on PostgreSQL`, `${rps('sqlite').toFixed(0)} req/s on SQLite`, ratio.toFixed(2), `${SECONDS} s each in 1 s turns, 10 connections; p99 ${pct(acc.postgres.map((x) => x.p99), 50)} vs ${pct(acc.sqlite.map((x) => x.p99), 50)} ms`]);
    summary('scale-out', 'signed GET req/s on PostgreSQL', Math.round(rps('postgres')), Math.round(rps('sqlite')), Number(ratio.toFixed(2)), 'against the embedded server on SQLite');
    for (const s of Object.values(servers)) await new Promise((r) => (s.proc.once('exit', r), s.proc.kill('SIGTERM')));
    await f.close();
  }
  if (PARTS.has('5')) {
    // A shared OS layer restored from the bucket against the cold build of the same layer (mmdebstrap, the
    // packages fetched from the mirror), both into empty caches of their own, the cold one first.
    const { openPgStore } = require('../dist/src/server/store/postgres/store.js');
    const { openS3Blobs } = require('../dist/src/server/blobs/s3.js');
    const { sharedLayers } = require('../dist/src/server/shared-layers.js');
    const { OsLayerCache, defaultMirror } = require('../dist/src/imaging/os/index.js');
    const db = `af_bench_layers_${randomBytes(3).toString('hex')}`;
    await query(pgEnv.DATABASE_URL, `CREATE DATABASE ${db}`);
    const u = new URL(pgEnv.DATABASE_URL);
    u.pathname = `/${db}`;
    const store = await openPgStore(u.toString(), { now: () => new Date() });
    const layersPrefix = `bench-layers-${randomBytes(3).toString('hex')}`;
    const blobs = await openS3Blobs(`s3://${s3Env.S3_BUCKET}/${layersPrefix}?endpoint=${encodeURIComponent(s3Env.S3_ENDPOINT)}&region=${s3Env.S3_REGION}&path-style=true`);
    const tier = sharedLayers(store.layers, blobs);
    const spec = { suite: 'bookworm', arch: 'amd64', profile: 'Minimal', packages: [{ name: 'nginx' }], kernel: 'cloud', cloudInit: false, mirror: defaultMirror() };
    chmodSync(work, 0o711); // the build's user namespace passes through to the caches
    const cacheOf = (name) => {
      const dir = mkdtempSync(join(work, `layers-${name}-`));
      chmodSync(dir, 0o711);
      return new OsLayerCache({ dir, shared: tier });
    };
    try {
      const timedAcquire = async (cache) => {
        const t0 = performance.now();
        const layer = await cache.acquire(spec);
        const seconds = (performance.now() - t0) / 1000;
        await layer.release();
        return seconds;
      };
      const cold = cacheOf('cold');
      const coldSeconds = await timedAcquire(cold);
      const s0 = performance.now();
      await cold.settle();
      const shareSeconds = (performance.now() - s0) / 1000;
      const hitSeconds = await timedAcquire(cacheOf('hit'));
      const [entry] = await query(u.toString(), 'SELECT size FROM appliance_forge.os_layers');
      rows.push(['shared OS layer hit (Debian 12 Minimal + nginx)', `${hitSeconds.toFixed(1)} s to restore`, `cold build: ${coldSeconds.toFixed(1)} s`, (hitSeconds / coldSeconds).toFixed(2), `archive ${(Number(entry.size) / 1024 ** 2).toFixed(0)} MiB, shared in ${shareSeconds.toFixed(1)} s after the cold build's answer`]);
      summary('scale-out', 'shared OS layer hit, s', Number(hitSeconds.toFixed(1)), Number(coldSeconds.toFixed(1)), Number((hitSeconds / coldSeconds).toFixed(2)), 'against the cold build');
    } finally {
      blobs.close();
      await removePrefix(layersPrefix);
      await store.close();
      await query(pgEnv.DATABASE_URL, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    }
  }
} finally {
  console.log('\n| case | value | baseline (same run) | ratio | note |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}
process.exit(0);
