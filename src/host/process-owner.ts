// Who owns a temporary folder of the cache: `<pid>.<start time>` (/proc/<pid>/stat field 22), so a
// crashed process's folders and leases are recognised as dead (even if its pid is reused) and swept.
import { readFileSync } from 'node:fs';

function procStart(pid: number): string | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** A process's identity that survives pid reuse: pid and its start time in clock ticks. */
export function ownerId(pid: number): string {
  return `${pid}.${procStart(pid) ?? 0}`;
}

const OWNER = ownerId(process.pid);

/** This process's owner id. */
export function processOwner(): string {
  return OWNER;
}

/** Is the owner of a name `<pid>.<start>-…` still running? */
export function ownerAlive(name: string): boolean {
  const m = /^(\d+)\.(\d+)-/.exec(name);
  if (!m) return false;
  return procStart(Number(m[1])) === m[2];
}
