// The web console (/console) of the reference server as a child process: the bytes of the first page (the
// sign-in page with its style sheet and script), and the time of the images page of a user with 1,000 images,
// against two baselines measured in the same run: the API's list of the same 1,000 images (signed
// `GET users/alice/images`, XML) and a bare node:http child answering the console page's own bytes.
// Build first: `npx tsc -p tsconfig.json && node bench/console.mjs`. BENCH_REPS sets the repetitions (20).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareServer, referenceServer, summary } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
const { createUser } = require('../dist/src/server/index.js');
const { signTarget } = require('../dist/src/auth/signer.js');
const { SqliteStore } = require('../dist/src/server/store/sqlite/store.js');
const { systemClock } = require('../dist/src/server/ports.js');

const REPS = Number(process.env.BENCH_REPS ?? 20);
const IMAGES = 1000;
const PASSWORD = 'bench-Console-pw1';
const dir = mkdtempSync(join(tmpdir(), 'forge-bench-console-'));
const data = join(dir, 'data');
const alice = await createUser(data, { login: 'alice', password: PASSWORD });
const ref = await referenceServer(data, ['--no-catalog-refresh']);
const api = new URL(ref.url);
const origin = api.origin;
let bare;

/** One GET read to its end: {ms, bytes, status, text, headers}. */
async function get(url, headers = {}) {
  const t0 = performance.now();
  const r = await fetch(url, { redirect: 'manual', headers });
  const buf = Buffer.from(await r.arrayBuffer());
  return { ms: performance.now() - t0, bytes: buf.length, status: r.status, text: buf.toString('utf8'), headers: r.headers };
}

/** Median and best of REPS runs of `fn` (after one warm-up). */
async function timed(fn) {
  await fn();
  const ms = [];
  for (let i = 0; i < REPS; i++) ms.push((await fn()).ms);
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(ms.length / 2)], best: ms[0] };
}

try {
  // The first page: what a browser fetches for /console before signing in.
  const first = await get(`${origin}/console/sign-in`);
  const assets = [...first.text.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
  let firstBytes = first.bytes;
  for (const a of assets) firstBytes += (await get(origin + a)).bytes;
  const preCookie = first.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const csrf = /name="csrf" value="([^"]+)"/.exec(first.text)[1];

  // Sign in.
  const signIn = await fetch(`${origin}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: preCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, login: 'alice', password: PASSWORD }).toString(),
  });
  if (signIn.status !== 303) throw new Error(`sign-in answered ${signIn.status}`);
  const cookie = signIn.headers.getSetCookie().find((c) => c.startsWith('forge_console=')).split(';')[0];

  // 1,000 images of one appliance, written through a second connection to the server's database.
  const made = await fetch(`${api.origin}${api.pathname}/${signTarget('users/alice/appliances', alice)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ appliance: { name: 'bench', version: '1', distributionUri: 'distributions/1' } }),
  });
  if (made.status !== 201) throw new Error(`appliance: ${made.status} ${await made.text()}`);
  const aid = (await made.json()).appliance.dbId;
  const db = new SqliteStore(join(data), systemClock);
  await db.tx(async (t) => {
    for (let i = 0; i < IMAGES; i++) {
      const done = i % 10 !== 0;
      await t.insert('image', {
        owner: 'alice',
        parentId: aid,
        doc: {
          applianceId: aid, formatName: 'QCOW2', compress: false, installProfile: {}, revision: 0,
          status: done ? { complete: true, percentage: 100, message: 'done' } : { percentage: 40, message: 'installing packages' },
          ...(done ? { file: { path: `images/bench-${i}`, fileName: `bench-${i}.qcow2`, size: 400_000_000 + i, sha256: 'a'.repeat(64), md5: 'b'.repeat(32), mimeType: 'application/octet-stream', stored: new Date().toISOString() } } : {}),
        },
      });
    }
  });
  await db.close();

  const listPage = await get(`${origin}/console/images`, { cookie });
  if (!listPage.text.includes(`${IMAGES} images`)) throw new Error(`the images page does not list ${IMAGES} images`);
  const pageFile = join(dir, 'images.html');
  writeFileSync(pageFile, listPage.text);
  bare = await bareServer({ '/images': { file: pageFile, type: 'text/html; charset=utf-8' } });

  const consoleList = await timed(() => get(`${origin}/console/images`, { cookie }));
  const lastPage = await timed(() => get(`${origin}/console/images?page=${IMAGES / 100}`, { cookie }));
  const apiList = await timed(() => get(`${api.origin}${api.pathname}/${signTarget('users/alice/images', alice)}`, { accept: 'application/xml' }));
  const bareList = await timed(() => get(`${bare.url}images`));

  const f = (x) => x.toFixed(1);
  console.log(`first page (sign-in + ${assets.length} assets): ${firstBytes} bytes (${(firstBytes / 1024).toFixed(1)} KiB); the images page: ${listPage.bytes} bytes`);
  console.log(`images page with ${IMAGES} images (100 shown): median ${f(consoleList.median)} ms, best ${f(consoleList.best)} ms; its last page: median ${f(lastPage.median)} ms`);
  console.log(`baselines in the same run: API list of the same ${IMAGES} images (XML) median ${f(apiList.median)} ms; bare node:http, same bytes, median ${f(bareList.median)} ms`);
  summary('console', 'first page bytes', firstBytes, 100 * 1024, firstBytes / (100 * 1024), 'sign-in page + CSS + JS, against the 100 KB budget');
  summary('console', `images page, ${IMAGES} images (ms, median)`, consoleList.median, apiList.median, consoleList.median / apiList.median, 'baseline: the API list of the same images');
  summary('console', 'images page against bare node:http (ms, median)', consoleList.median, bareList.median, consoleList.median / bareList.median, 'the same bytes from a bare server');
} finally {
  await bare?.stop();
  await ref.stop();
  rmSync(dir, { recursive: true, force: true });
}
