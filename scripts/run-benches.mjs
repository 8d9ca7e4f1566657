// `npm run bench`: builds nothing (run `npx tsc -p tsconfig.json` first), runs every benchmark of
// bench/ in sequence (each against dist/, each measuring its own baseline in the same run), shows
// their output as it comes, then prints one summary table. Exit code 1 when any bench failed.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ALL = ['codec.mjs', 'xml-libraries.mjs', 'catalog-stream.mjs', 'fiql-search.mjs', 'imaging.mjs', 'server-throughput.mjs', 'console.mjs', 'upload.mjs', 'apply-noop.mjs', 'boot.mjs', 'real-image.mjs', 'sandbox.mjs'];
// BENCH_SKIP=real-image.mjs,upload.mjs leaves those out (real-image builds three images from the mirror: ~8 min).
const SKIP = new Set((process.env.BENCH_SKIP ?? '').split(',').map((x) => x.trim()).filter(Boolean));
const BENCHES = ALL.filter((f) => !SKIP.has(f) && !SKIP.has(f.replace(/\.mjs$/, '')));

if (!existsSync(`${ROOT}dist/src/index.js`)) {
  console.error('dist/ is missing: run `npx tsc -p tsconfig.json` first');
  process.exit(1);
}

function run(file) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, [`bench/${file}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const take = (stream) => (c) => {
      out += c;
      stream.write(c);
    };
    p.stdout.on('data', take(process.stdout));
    p.stderr.on('data', take(process.stderr));
    p.once('exit', (code) => resolve({ file, code, seconds: (performance.now() - t0) / 1000, out }));
  });
}

const rows = [];
for (const file of BENCHES) {
  if (!existsSync(`${ROOT}bench/${file}`)) {
    rows.push({ bench: file, metric: 'missing', value: '', baseline: '', ratio: '', note: '' });
    continue;
  }
  console.log(`\n=== bench/${file}`);
  const r = await run(file);
  const lines = r.out.split('\n');
  const own = lines.filter((l) => l.startsWith('BENCH ')).map((l) => JSON.parse(l.slice(6)));
  if (own.length > 0) {
    for (const o of own) rows.push({ ...o, bench: file, ratio: typeof o.ratio === 'number' ? o.ratio.toFixed(2) : o.ratio });
  } else {
    // Benches written before this runner print their ratios in prose: keep those lines.
    const ratioLines = lines.filter((l) => /×|ratio|x (slower|faster)|vs |\/baseline/i.test(l)).map((l) => l.trim().replace(/\s+/g, ' '));
    for (const l of ratioLines.length ? ratioLines : ['(no ratio line)']) rows.push({ bench: file, metric: l, value: '', baseline: '', ratio: '', note: '' });
  }
  if (r.code !== 0) rows.push({ bench: file, metric: `FAILED (exit ${r.code})`, value: '', baseline: '', ratio: '', note: '' });
  rows.at(-1).note = `${rows.at(-1).note ? `${rows.at(-1).note}; ` : ''}${r.seconds.toFixed(0)} s`;
}

console.log(`\n=== summary (node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB)`);
const cols = ['bench', 'metric', 'value', 'baseline', 'ratio', 'note'];
const width = cols.map((c) => Math.min(90, Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length))));
const line = (r) => `| ${cols.map((c, i) => String(r[c] ?? '').slice(0, width[i]).padEnd(width[i])).join(' | ')} |`;
console.log(line(Object.fromEntries(cols.map((c) => [c, c]))));
console.log(`|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
process.exit(rows.some((r) => String(r.metric).startsWith('FAILED')) ? 1 : 0);
