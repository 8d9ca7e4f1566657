// QCOW2 generation: the native writer against `qemu-img convert -O qcow2`, on the same raw disk,
// measured in the same run (alternating, median of RUNS). The raw disk is a real appliance disk
// made by writeExt4Disk (MBR + ext4 holding PAYLOAD_MIB of random data) of DISK_MIB virtual size. A whole image
// build (OS layer, settings, disk) is bench/real-image.mjs.
// Two ratios: the converters alone (no digests), and with the sha256 + md5 every image needs (the
// native writer digests while writing; qemu-img's output is digested in one pass afterwards).
// Runs against the build: `npx tsc -p tsconfig.json && node bench/imaging.mjs [DISK_MIB] [PAYLOAD_MIB]`.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const require = createRequire(import.meta.url);
const { writeExt4Disk } = require('../dist/src/imaging/disk/filesystem.js');
const { diskIdsFrom } = require('../dist/src/imaging/disk/disk-ids.js');
const { currentBuildHost } = require('../dist/src/imaging/build-host.js');
const { qcow2FromRaw } = require('../dist/src/imaging/disk/qcow2.js');
const { writeDigested, digestFile } = require('../dist/src/imaging/disk/output.js');

const DISK_MIB = Number(process.argv[2] ?? 2048);
const PAYLOAD_MIB = Number(process.argv[3] ?? 256);
const RUNS = 3;
const MiB = 1024 * 1024;

const dir = mkdtempSync(join(tmpdir(), 'af-bench-imaging-'));
// mke2fs runs as the build sandbox's root (another host uid): it must reach the disk and the tree through this folder.
chmodSync(dir, 0o755);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = async (fn) => {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const fresh = (p) => rmSync(p, { force: true });

try {
  const tree = join(dir, 'tree');
  mkdirSync(join(tree, 'opt/app'), { recursive: true });
  const payload = join(tree, 'opt/app/payload.bin');
  const out = createWriteStream(payload);
  for (let i = 0; i < PAYLOAD_MIB / 4; i++) if (!out.write(randomBytes(4 * MiB))) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
  const raw = join(dir, 'disk.raw');
  await writeExt4Disk({ rawPath: raw, diskBytes: DISK_MIB * MiB, tree, label: 'root', ids: diskIdsFrom('bench'), host: currentBuildHost() });

  const native = join(dir, 'native.qcow2');
  const nativeNoDigest = join(dir, 'native-nodigest.qcow2');
  const qemu = join(dir, 'qemu.qcow2');
  const t = { native: [], nativeNoDigest: [], qemu: [], qemuDigest: [] };
  for (let run = 0; run < RUNS; run++) {
    fresh(qemu);
    t.qemu.push(await time(async () => execFileSync('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', raw, qemu])));
    fresh(native);
    // As a build writes it: one read buffer reused (writeDigested copies each chunk at once).
    t.native.push(await time(() => writeDigested(qcow2FromRaw(raw, DISK_MIB * MiB, { reuseBuffer: true }), native, { compress: false })));
    fresh(nativeNoDigest);
    t.nativeNoDigest.push(await time(() => pipeline(qcow2FromRaw(raw, DISK_MIB * MiB), createWriteStream(nativeNoDigest))));
    fresh(qemu);
    t.qemuDigest.push(await time(async () => {
      execFileSync('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', raw, qemu]);
      await digestFile(qemu);
    }));
  }
  // Both converters must produce the same guest content (qemu-img compare exits non-zero otherwise).
  execFileSync('qemu-img', ['compare', '-f', 'qcow2', '-F', 'qcow2', native, qemu]);
  execFileSync('qemu-img', ['check', native], { stdio: 'ignore' });

  const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)]));
  const size = (p) => (statSync(p).size / MiB).toFixed(1);
  console.log(`imaging bench: ${DISK_MIB} MiB virtual disk, ${PAYLOAD_MIB} MiB random payload, median of ${RUNS} (node ${process.version})`);
  const row = (label, ms, extra = '') => console.log(`  ${label.padEnd(44)}${ms.toFixed(0).padStart(7)} ms${extra}`);
  row('qemu-img convert -O qcow2', m.qemu, `   file ${size(qemu)} MiB`);
  row('native qcow2 writer', m.nativeNoDigest, `   file ${size(native)} MiB   ratio ${(m.nativeNoDigest / m.qemu).toFixed(2)}x`);
  row('qemu-img convert + sha256/md5 pass', m.qemuDigest);
  row('native qcow2 writer + sha256/md5 while writing', m.native, `   ratio ${(m.native / m.qemuDigest).toFixed(2)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
