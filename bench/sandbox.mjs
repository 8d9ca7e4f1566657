// The cost of sandboxed builds (docs/security.md "Security model"): a cold `apply examples/local.yml` (empty
// OS-layer cache, fresh data folder, everything downloaded) with the image tools run as root of a user
// namespace, against the same build privileged (APPLIANCE_FORGE_SANDBOX=privileged: mmdebstrap root
// mode, tools as the host's root), in BENCH_REPS (default 3) interleaved pairs; the median pair's ratio.
// Needs root with a subordinate id range (bash scripts/prereqs.sh build); build first:
// `npx tsc -p tsconfig.json && node bench/sandbox.mjs`. Takes 6 to 10 minutes.
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, summary } from './lib/servers.mjs';

const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));
const REPS = Number(process.env.BENCH_REPS ?? 3);

if (process.getuid?.() !== 0) {
  console.log('sandbox bench: skipped, the privileged baseline needs root');
  process.exit(0);
}

/** One cold apply in a fresh folder with a fresh cache; seconds. */
function coldApply(mode) {
  const dir = mkdtempSync('/var/tmp/forge-bench-sandbox-');
  chmodSync(dir, 0o711); // the namespace's root reaches the cache inside it
  cpSync(EXAMPLES, join(dir, 'examples'), { recursive: true });
  const env = { ...process.env, APPLIANCE_FORGE_CACHE_DIR: join(dir, 'cache'), APPLIANCE_FORGE_SANDBOX: mode, NO_COLOR: '1' };
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, [CLI, 'apply', 'examples/local.yml', '-q'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    p.once('exit', (code) => {
      const s = (performance.now() - t0) / 1000;
      rmSync(dir, { recursive: true, force: true });
      if (code === 0) resolve(s);
      else reject(new Error(`apply (${mode}) exited ${code}: ${out.slice(-3000)}`));
    });
  });
}

const pairs = [];
for (let i = 0; i < REPS; i++) {
  const privileged = await coldApply('privileged');
  const sandboxed = await coldApply('userns');
  pairs.push({ privileged, sandboxed, ratio: sandboxed / privileged });
  console.log(`pair ${i + 1}: sandboxed ${sandboxed.toFixed(1)} s, privileged ${privileged.toFixed(1)} s, ratio ${(sandboxed / privileged).toFixed(2)}`);
}
const median = [...pairs].sort((a, b) => a.ratio - b.ratio)[Math.floor(pairs.length / 2)];
summary('sandbox', `cold apply sandboxed / privileged (s), median of ${REPS} pairs`, median.sandboxed.toFixed(1), median.privileged.toFixed(1), median.ratio, `pairs: ${pairs.map((p) => p.ratio.toFixed(2)).join(', ')}; target ≤ 1.1`);
