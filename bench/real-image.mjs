// Real image builds (docs/images.md "Real images"), every figure against a baseline measured in the same run:
//   1. bare `mmdebstrap` of exactly the package set of examples/local.yml's image (no tuning, nothing cached)
//   2. cold `apply examples/local.yml` on a fresh server with an empty OS-layer cache → ratio to 1 (and
//      when the OS layer is in the cache: one built in memory is kept there after the build's answer)
//   3. the same after a software-only change (one file of the bundle edited), BENCH_REPS times → median seconds, ratio to 2
//   4. sizes of the qcow2 (plain and compressed) and the server's peak RSS during the builds.
// Needs root and the build prerequisites (`bash scripts/prereqs.sh build`); build first:
// `npx tsc -p tsconfig.json && node bench/real-image.mjs`. Takes a few minutes (two full downloads).
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, peakRssMiB, summary } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
// The release examples/local.yml declares (its `os.version`), or BENCH_RELEASE (`12`, `13`), by the release table.
const { releaseNamed } = require('../dist/src/model/releases.js');
const EXAMPLE_VERSION = /^\s+version: '(\d+)'/m.exec(readFileSync(new URL('../examples/local.yml', import.meta.url), 'utf8'))[1];
const RELEASE = releaseNamed(process.env.BENCH_RELEASE ?? EXAMPLE_VERSION);
if (!RELEASE) throw new Error(`BENCH_RELEASE=${process.env.BENCH_RELEASE}: not a release of src/model/releases.ts`);
const EXAMPLE_SUITE = RELEASE.codename;
const LABEL = `Debian ${RELEASE.version}`;
const { createUser } = require('../dist/src/server/index.js');
const imaging = require('../dist/src/imaging/index.js');
const recipe = require('../dist/src/imaging/os/recipe.js');
const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));

if (process.getuid?.() !== 0) {
  console.log('real-image bench: skipped, mmdebstrap builds need root');
  process.exit(0);
}

const dir = mkdtempSync('/var/tmp/forge-bench-image-');
chmodSync(dir, 0o711); // its caches: the build's user namespace root passes through (src/host/sandbox.ts)
const run = (cmd, args, env = process.env) =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    p.once('exit', (code) => (code === 0 ? resolve({ s: (performance.now() - t0) / 1000, out }) : reject(new Error(`${cmd} exited ${code}: ${out.slice(-3000)}`))));
  });

try {
  // 1. The baseline: the image's own OS layer spec (template packages + what format and settings add).
  const spec = imaging.osLayerSpecOf({
    suite: EXAMPLE_SUITE, profile: 'Minimal', packages: [{ name: 'curl' }, { name: 'nginx' }], disk: 'qcow2', cloudInit: false,
    settings: { hostname: 'x', diskMiB: 2048, swapMiB: 0, kernelParams: [], rootUser: { disablePasswordLogin: false, sshKeys: [] }, users: [], groups: [] },
    mirror: imaging.defaultMirror(),
  });
  cpSync(EXAMPLES, join(dir, 'site'), { recursive: true }); // keeps the examples untouched
  const decl = join(dir, 'site', 'local.yml');
  writeFileSync(decl, readFileSync(decl, 'utf8').replace(`    version: '${EXAMPLE_VERSION}'`, `    version: '${RELEASE.version}'`));
  // Bare: the same variant, packages and sources, none of the project's tuning (no path excludes, no
  // kept .deb cache, dpkg with its default fsync).
  const bareArgs = ['--mode=root', '--format=directory', `--variant=${spec.profile === 'Standard' ? 'standard' : 'required'}`, `--architectures=${spec.arch}`,
    `--include=${recipe.includeList(spec).join(',')}`, spec.suite, join(dir, 'bare-tree'), ...recipe.sourceLines(spec)];
  const bareOnce = async () => {
    const r = await run('mmdebstrap', bareArgs);
    rmSync(join(dir, 'bare-tree'), { recursive: true, force: true });
    return r.s;
  };

  // 2. A fresh server and an empty cache each time: everything is downloaded and built.
  const startServer = async (tag) => {
    const data = join(dir, `data-${tag}`);
    const alice = await createUser(data, { login: 'alice' });
    // Without the background catalog refresh: it reads the mirror's whole index (~64k packages) and would count in the build's RSS.
    const server = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', data, '--cache-dir', join(dir, `cache-${tag}`), '--no-catalog-refresh'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const url = await new Promise((resolve, reject) => {
      let buf = '';
      server.stdout.on('data', (c) => {
        buf += c;
        const l = buf.split('\n').find((x) => x.startsWith('http://'));
        if (l) resolve(l.trim());
      });
      server.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    const env = { ...process.env, APPLIANCE_FORGE_URL: url, APPLIANCE_FORGE_USER: 'alice', APPLIANCE_FORGE_API_KEY: alice.publicKey, APPLIANCE_FORGE_SECRET_KEY: alice.secretKey, APPLIANCE_FORGE_ROOT_PASSWORD: 'bench-only' };
    const stop = async () => {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
      rmSync(join(dir, `cache-${tag}`), { recursive: true, force: true });
    };
    return { server, env, stop, apply: (out) => run(process.execPath, [CLI, 'apply', join(dir, 'site', 'local.yml'), '--json', '--output', out], env) };
  };

  // The disk's and the mirror's speed move single runs by ±20 % here: REPS interleaved pairs (bare, then cold), the median ratio.
  const REPS = Number(process.env.BENCH_REPS ?? 3);
  const pairs = [];
  let last;
  for (let i = 0; i < REPS; i++) {
    // Each timed run starts with nothing left to write back: the run before's files (a tree, an image,
    // a layer) would otherwise be flushed during it, and bill it for that run's disk.
    await run('sync', []);
    const bare = await bareOnce();
    const srv = await startServer(i);
    await run('sync', []);
    const cold = await srv.apply(join(dir, `out-${i}`));
    // A layer built in memory is kept in the cache after the build's answer (src/imaging/os/cache.ts):
    // waited for here, so that the next pair starts on a quiet disk, and said.
    const t0 = performance.now();
    while (readdirSync(join(dir, `cache-${i}`, 'os', 'layers')).length === 0) {
      // A keep that failed is a warning in the server's log: the bench stops rather than wait forever.
      if (performance.now() - t0 > 120_000) throw new Error('the OS layer built in memory was not in the cache 120 s after the apply (see the server\'s log)');
      await new Promise((r) => setTimeout(r, 50));
    }
    const kept = (performance.now() - t0) / 1000;
    pairs.push({ bare, cold: cold.s, ratio: cold.s / bare });
    console.log(`pair ${i + 1}/${REPS}: bare mmdebstrap (${recipe.includeList(spec).length} packages asked) ${bare.toFixed(1)} s, cold apply ${cold.s.toFixed(1)} s, ratio ${(cold.s / bare).toFixed(2)}; the OS layer in the cache ${kept.toFixed(1)} s after the apply`);
    if (last) await last.srv.stop();
    last = { srv, cold };
  }
  const median = [...pairs].sort((a, b) => a.ratio - b.ratio)[Math.floor(pairs.length / 2)];
  const { server, apply } = last.srv;
  try {
    const cold = last.cold;
    // `apply --json` prints one event per line, then its result: the last line with `files`.
    const files1 = cold.out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).findLast((x) => Array.isArray(x.files)).files;
    console.log(`cold apply vs bare mmdebstrap, median of ${REPS} pairs: ${median.cold.toFixed(1)} s vs ${median.bare.toFixed(1)} s = ${median.ratio.toFixed(2)} (all: ${pairs.map((p) => p.ratio.toFixed(2)).join(', ')})`);

    // 3. A software-only change: one file of the bundle edited before each of REPS rebuilds (the base disk
    // of the cold apply is reused), the median.
    const page = join(dir, 'site', 'files', 'index.html');
    const rebuilds = [];
    for (let i = 0; i < REPS; i++) {
      writeFileSync(page, readFileSync(page, 'utf8').replace('</body>', `<p>rebuilt ${Date.now()}</p></body>`));
      rebuilds.push((await apply(join(dir, `out-rebuild-${i}`))).s);
      rmSync(join(dir, `out-rebuild-${i}`), { recursive: true, force: true });
    }
    const warm = { s: [...rebuilds].sort((a, b) => a - b)[Math.floor(rebuilds.length / 2)] };
    console.log(`rebuild after a software change, median of ${REPS}: ${warm.s.toFixed(1)} s (all: ${rebuilds.map((x) => x.toFixed(1)).join(', ')}; ratio to the cold apply ${(warm.s / cold.s).toFixed(2)})`);

    // 4. Sizes: the qcow2 as built, and gzip-compressed (same layer: a cheap third build through the API is not needed).
    const qcow2 = files1[0].path;
    const bytes = statSync(qcow2).size;
    await run('sh', ['-c', `gzip -6 -c '${qcow2}' > '${qcow2}.gz'`]);
    const gz = statSync(`${qcow2}.gz`).size;
    const rss = peakRssMiB(server.pid);
    console.log(`qcow2: ${(bytes / 1e6).toFixed(0)} MB, gzip: ${(gz / 1e6).toFixed(0)} MB; server peak RSS ${rss.toFixed(0)} MiB`);
    summary('real-image', `${LABEL}: cold apply / bare mmdebstrap (s), median of ${REPS} pairs`, median.cold.toFixed(1), median.bare.toFixed(1), median.ratio, 'target ≤ 1.15');
    summary('real-image', `${LABEL}: ` + `software-only rebuild / cold apply (s), median of ${REPS}`, warm.s.toFixed(1), cold.s.toFixed(1), warm.s / cold.s, 'target ≤ 5 s p50');
    summary('real-image', `${LABEL}: ` + 'qcow2 MB (gzip MB)', (bytes / 1e6).toFixed(0), (gz / 1e6).toFixed(0), '', 'target ≤ 250 (≤ 100)');
    summary('real-image', 'server peak RSS MiB', rss.toFixed(0), '', '', 'target ≤ 300');
  } finally {
    await last.srv.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
