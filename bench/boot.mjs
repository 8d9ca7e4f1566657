// The smoke boot (docs/benchmarks.md): QEMU start → nginx answers 200 on a forwarded loopback port, for
// the image of examples/local.yml's package set, by four paths, each the median of BENCH_REPS runs,
// interleaved so load hits them alike:
//   baseline:  the whole boot, SeaBIOS + GRUB (what a machine does), `boot`'s default 1 vCPU
//   baseline2: the same with `--cpus 2` (TCG multi-threaded: both cores of a 2-core host)
//   direct:    the image's own kernel and initramfs started by QEMU (`boot --direct-kernel`, with its
//              fast-path kernel words), 1 vCPU
//   direct2:   the same with `--cpus 2`
// The image is built by the library from the shared OS-layer cache (minutes on a cold cache). Needs root
// or a user namespace, and the build and boot prerequisites. `npx tsc -p tsconfig.json && node bench/boot.mjs`.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summary } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
// The release examples/local.yml declares (its `os.version`), by the release table.
const { releaseNamed } = require('../dist/src/model/releases.js');
const EXAMPLE_SUITE = releaseNamed(/^\s+version: '(\d+)'/m.exec(readFileSync(new URL('../examples/local.yml', import.meta.url), 'utf8'))[1]).codename;
const imaging = require('../dist/src/imaging/index.js');
const { bootCheck } = require('../dist/src/imaging/boot/index.js');
const REPS = Number(process.env.BENCH_REPS ?? 3);

const dir = mkdtempSync(join(tmpdir(), 'forge-bench-boot-'));
chmodSync(dir, 0o711); // the build's namespace root passes through
try {
  const settings = {
    hostname: 'bench-boot', diskMiB: 2048, swapMiB: 0, timezone: 'Etc/UTC', kernelParams: [],
    rootUser: { disablePasswordLogin: true, sshKeys: [] }, users: [], groups: [],
  };
  const spec = imaging.osLayerSpecOf({
    suite: EXAMPLE_SUITE, profile: 'Minimal', packages: [{ name: 'curl' }, { name: 'nginx' }], disk: 'qcow2', cloudInit: false, settings, mirror: imaging.defaultMirror(),
  });
  const layer = await imaging.buildOsLayer(spec, { cacheDir: join(imaging.defaultCacheDir(), 'os') });
  const image = join(dir, 'bench.qcow2');
  try {
    await imaging.buildImage({ layerDir: layer.dir, settings, cloudInit: false, disk: 'qcow2', compress: false, files: [], manifest: '{}', outFile: image, workDir: dir });
  } finally {
    await layer.release();
  }
  const paths = { baseline: {}, baseline2: { cpus: 2 }, direct: { directKernel: true }, direct2: { directKernel: true, cpus: 2 } };
  const times = Object.fromEntries(Object.keys(paths).map((k) => [k, []]));
  for (let i = 0; i < REPS; i++) {
    for (const [name, extra] of Object.entries(paths)) {
      const r = await bootCheck({ image, http: { port: 80 }, timeoutMs: 300_000, ...extra });
      if (r.http?.status !== 200) throw new Error(`${name}: no 200 (${r.reason ?? r.http?.status}): ${r.consoleTail.slice(-1500)}`);
      times[name].push(r.http.readyMs / 1000);
      console.log(`${name} run ${i + 1}: nginx 200 after ${(r.http.readyMs / 1000).toFixed(1)} s`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(times.baseline);
  summary('boot', `QEMU start → nginx 200, firmware + GRUB (s), median of ${REPS}`, base.toFixed(1), '', '', 'target ≤ 25 s');
  const base2 = median(times.baseline2);
  summary('boot', `QEMU start → nginx 200, firmware + GRUB, 2 vCPUs (s), median of ${REPS}`, base2.toFixed(1), base.toFixed(1), base2 / base, 'target ≤ 25 s');
  for (const name of ['direct', 'direct2']) {
    const m = median(times[name]);
    summary('boot', `QEMU start → nginx 200, direct kernel${name === 'direct2' ? ', 2 vCPUs' : ''} (s), median of ${REPS}`, m.toFixed(1), base.toFixed(1), m / base, 'target ≤ 10 s');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
