// One temporary folder per test run: every suite's mkdtemp (os.tmpdir()), the servers and tools they
// spawn (TMPDIR is inherited) write under it, and it is removed when the run ends, so a run of real
// image builds (several GiB of trees and disks) leaves nothing behind on the machine's disk; nor do
// the images the run published to the loopback Glance.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sweepGlanceSince } from './openstack';

export default function setup(): () => Promise<void> {
  const started = Date.now();
  const root = mkdtempSync(path.join(process.env.TMPDIR ?? tmpdir(), 'af-test-run-'));
  chmodSync(root, 0o711); // image builds' user namespace root passes through to its own folders (src/host/sandbox.ts)
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return async () => {
    const removed = await sweepGlanceSince(started).catch((e: unknown) => {
      // No OpenStack running at the end (no test started it, or it was stopped): nothing to sweep.
      if (!/ECONNREFUSED/.test(`${String(e)} ${String((e as { cause?: unknown }).cause)}`)) console.warn(`[teardown] Glance sweep failed: ${String(e)}`);
      return 0;
    });
    if (removed > 0) console.log(`[teardown] removed ${removed} Glance image(s) this run created`);
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
}
