// One temporary folder per test run: every suite's mkdtemp (os.tmpdir()), the servers and tools they
// spawn (TMPDIR is inherited) write under it, and it is removed when the run ends, so a run of real
// image builds (several GiB of trees and disks) leaves nothing behind on the machine's disk; nor do
// the images the run published to the loopback Glance, nor the test files' objects in the loopback S3.
import { chmodSync, existsSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sweepGlanceSince } from './openstack';
import { sweepS3Tests } from './s3';

export default function setup(): () => Promise<void> {
  const started = Date.now();
  const root = mkdtempSync(path.join(process.env.TMPDIR ?? tmpdir(), 'af-test-run-'));
  chmodSync(root, 0o711); // image builds' user namespace root passes through to its own folders (src/host/sandbox.ts)
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  // The lowest free space of the run's disk, sampled: printed at the end, where a CI log's tail shows it
  // (a full disk fails writes far from their cause: Swift's S3 answers 503, builds fail with ENOSPC).
  // Each project's setup makes its own root, the second inside the first's (TMPDIR is set by then), and
  // the first's teardown may remove both: the nearest folder still there answers for it.
  const freeGiB = (): number => {
    let at = root;
    while (!existsSync(at)) at = path.dirname(at);
    const s = statfsSync(at);
    return (s.bavail * s.bsize) / 2 ** 30;
  };
  const atStart = freeGiB();
  let lowest = atStart;
  const sampler = setInterval(() => {
    lowest = Math.min(lowest, freeGiB());
  }, 5_000);
  sampler.unref();
  return async () => {
    clearInterval(sampler);
    console.log(`[teardown] free disk space under ${path.dirname(root)}: ${atStart.toFixed(1)} GiB at the start, ${lowest.toFixed(1)} GiB at the lowest, ${freeGiB().toFixed(1)} GiB now`);
    const removed = await sweepGlanceSince(started).catch((e: unknown) => {
      // No OpenStack running at the end (no test started it, or it was stopped): nothing to sweep.
      if (!/ECONNREFUSED/.test(`${String(e)} ${String((e as { cause?: unknown }).cause)}`)) console.warn(`[teardown] Glance sweep failed: ${String(e)}`);
      return 0;
    });
    if (removed > 0) console.log(`[teardown] removed ${removed} Glance image(s) this run created`);
    const objects = await sweepS3Tests().catch((e: unknown) => {
      if (!/ECONNREFUSED/.test(`${String(e)} ${String((e as { cause?: unknown }).cause)}`)) console.warn(`[teardown] S3 sweep failed: ${String(e)}`);
      return 0;
    });
    if (objects > 0) console.log(`[teardown] removed ${objects} object(s) of the test files from the loopback S3`);
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
}
