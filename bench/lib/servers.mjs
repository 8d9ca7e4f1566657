// Bench helpers: the reference server as a child process (`appliance-forge serve`, from dist/), a bare
// node:http child serving fixed bytes or sinking uploads (the baselines), peak RSS of a child, and a
// summary line `BENCH {json}` that scripts/run-benches.mjs collects into its table.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// BENCH_CLI: another build's command line, for a "before" figure measured the same way.
export const CLI = process.env.BENCH_CLI ?? fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** Start a child that prints its base URL on its first line; resolves with {url, proc, stop}. */
function child(args) {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (c) => {
      buf += c;
      const line = buf.split('\n').find((l) => l.startsWith('http://'));
      if (line) resolve({ url: line.trim(), proc, stop: () => new Promise((r) => (proc.once('exit', r), proc.kill('SIGTERM'))) });
    });
    proc.once('exit', (code) => reject(new Error(`child exited ${code} before its URL`)));
  });
}

export const referenceServer = (dataDir, extra = []) => child([CLI, 'serve', '--port', '0', '--data-dir', dataDir, ...extra]);

// The baseline: node:http alone. GET answers the given files' bytes by path; POST reads and drops the body.
const BARE = `
const http = require('node:http'); const fs = require('node:fs');
const routes = JSON.parse(process.argv[1]);
const bodies = Object.fromEntries(Object.entries(routes).map(([p, f]) => [p, { body: fs.readFileSync(f.file), type: f.type }]));
http.createServer((req, res) => {
  if (req.method === 'POST') { let n = 0; req.on('data', (c) => (n += c.length)); req.on('end', () => res.end(String(n))); return; }
  const b = bodies[req.url.split('?')[0]];
  if (!b) { res.statusCode = 404; return res.end(); }
  res.setHeader('Content-Type', b.type); res.end(b.body);
}).listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + this.address().port + '/'); });`;
export const bareServer = (routes = {}) => child(['-e', BARE, JSON.stringify(routes)]);

/** Peak resident set of a process (VmHWM), in MiB. */
export function peakRssMiB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU time (user + system) of a /proc stat line, in ms. */
function statCpuMs(stat) {
  // Fields 14 and 15 (utime, stime), in clock ticks (100 a second on Linux): the 12th and 13th after the command's `)`.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** CPU time (user + system) a process has used so far, in ms; its threads included (/proc/PID/stat). */
export function cpuMs(pid) {
  return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** CPU time so far of each thread of a process, in ms, by `name/tid` (`main` for the main thread; Node names its worker threads `node`). */
export function threadCpuMs(pid) {
  const out = {};
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    out[Number(t) === pid ? 'main' : `${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}/${t}`] = statCpuMs(stat);
  }
  return out;
}

/** Forget a process's peak RSS so far (Linux `clear_refs` 5): the next peakRssMiB is the peak from now on. */
export function resetPeakRss(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** One line for the runner's summary table. */
export function summary(bench, metric, value, baseline, ratio, note = '') {
  console.log(`BENCH ${JSON.stringify({ bench, metric, value, baseline, ratio, note })}`);
}
