// One temporary folder per test run: every suite's mkdtemp (os.tmpdir()), the servers and tools they
// spawn (TMPDIR is inherited) write under it, and it is removed when the run ends, so a run of real
// image builds (several GiB of trees and disks) leaves nothing behind on the machine's disk.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(path.join(process.env.TMPDIR ?? tmpdir(), 'af-test-run-'));
  chmodSync(root, 0o711); // image builds' user namespace root passes through to its own folders (src/host/sandbox.ts)
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
}
