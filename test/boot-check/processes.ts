// QEMU processes as /proc shows them, independently of the code under test: so "nothing left running" is
// checked by looking, not by asking the boot check.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Pids of the qemu-system-x86_64 processes with an argument containing `text` (an image's or a kernel's path). */
export function qemuPidsFor(text: string): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (path.basename(argv[0] ?? '') === 'qemu-system-x86_64' && argv.some((a) => a.includes(text))) pids.push(Number(d));
  }
  return pids;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
