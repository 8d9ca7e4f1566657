// The host's one runner (src/host/child.ts) with real programs: faults written once and handed to the
// caller's error class, stdin, bounded stderr, cancellation (SIGKILL, or SIGTERM with a grace), a
// process group whose stragglers go with it; and the one message for a missing tool (src/host/tools.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import hostTools from '../../data/host-tools.json';
import { AbortedError } from '../../src/errors';
import { MAX_STDERR, run, runSync, start, type ChildFault } from '../../src/host/child';
import { packagesOf, toolsMissingMessage } from '../../src/host/tools';

class Fault extends Error {
  constructor(readonly fault: ChildFault) {
    super(fault.message);
  }
}
const asFault = (f: ChildFault): Error => new Fault(f);
const faultOf = (p: Promise<unknown>): Promise<ChildFault> =>
  p.then(
    () => {
      throw new Error('resolved');
    },
    (e: unknown) => (e as Fault).fault,
  );
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return false;
  }
};

describe('run', () => {
  it('feeds stdin, collects stdout, and hands a non-zero exit to the caller with the end of stderr', async () => {
    const r = await run({ command: 'sh', args: ['-c', 'tr a-z A-Z; echo "$LC_ALL"'], input: 'hello\n', collect: true }, asFault);
    expect(r.stdout).toBe('HELLO\nC\n');
    const f = await faultOf(run({ command: 'sh', args: ['-c', `head -c ${MAX_STDERR * 4} /dev/zero | tr '\\0' x >&2; echo last >&2; exit 3`] }, asFault));
    expect(f.kind).toBe('exit');
    expect(f.message).toMatch(/^sh failed \(exit status 3\): x+last$/);
    expect(f.message.length).toBeLessThan(MAX_STDERR + 100);
  });

  it('collected output past MAX_STDOUT is refused and the program stopped, not left printing', async () => {
    // `yes` never ends on its own: only the bound ends this run.
    const f = await faultOf(run({ command: 'yes', args: [], collect: true }, asFault));
    expect(f.kind).toBe('output');
    expect(f.message).toMatch(/^yes printed more than \d+ bytes/);
  }, 60_000);

  it('a program not on this host: the one message, naming its Debian package', async () => {
    const f = await faultOf(run({ command: 'no-such-program-af', args: [] }, asFault));
    expect(f).toMatchObject({ kind: 'missing', message: 'no-such-program-af is not installed on this host: install the Debian package no-such-program-af (apt-get install no-such-program-af)' });
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const q = await faultOf(run({ command: 'qemu-img', args: ['--version'] }, asFault));
      expect(q.message).toBe(toolsMissingMessage(['qemu-img']));
      expect(q.message).toContain('install the Debian package qemu-utils (apt-get install qemu-utils, or bash scripts/prereqs.sh build');
    } finally {
      process.env.PATH = saved;
    }
  });

  it('an abort kills the program and rejects with AbortedError once it has ended', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const p = run({ command: 'sleep', args: ['30'], signal: ac.signal }, asFault);
    setTimeout(() => ac.abort(), 100);
    await expect(p).rejects.toBeInstanceOf(AbortedError);
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(run({ command: 'true', args: [], signal: ac.signal }, asFault)).rejects.toBeInstanceOf(AbortedError);
  });

  it('with a grace, SIGTERM first: a program that cleans up on it ends by itself', async () => {
    const ac = new AbortController();
    let out = '';
    const p = run({ command: 'sh', args: ['-c', 'trap "echo cleaned; exit 0" TERM; echo ready; while :; do sleep 0.1; done'], signal: ac.signal, graceMs: 10_000, onStdout: (t) => {
      out += t;
      if (out.includes('ready')) ac.abort();
    } }, asFault);
    await expect(p).rejects.toBeInstanceOf(AbortedError);
    expect(out).toContain('cleaned');
  });

  it('a failed group leader takes its stragglers with it', async () => {
    let pid = 0;
    const f = await faultOf(run({ command: 'sh', args: ['-c', 'sleep 300 & echo $!; exit 1'], group: true, onStdout: (t) => (pid = Number(t.trim())) }, asFault));
    expect(f.kind).toBe('exit');
    expect(pid).toBeGreaterThan(0);
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pid)).toBe(false);
  });
});

describe('start and runSync', () => {
  it('start: an interactive program, killed as a group; runSync: an exit and its stderr', async () => {
    const child = start({ command: 'cat', args: [], interactive: true, group: true });
    const echoed = new Promise<string>((resolve) => child.stdout.once('data', (b: Buffer) => resolve(b.toString())));
    child.write('ping\n');
    expect(await echoed).toBe('ping\n');
    const exit = await child.kill();
    expect(exit.signal).toBe('SIGKILL');
    expect(runSync({ command: 'sh', args: ['-c', 'echo nope >&2; exit 4'] })).toMatchObject({ code: 4, stderr: 'nope' });
  });
});

describe('the tool vocabulary', () => {
  it('several tools: every package once, and the prereqs.sh purpose that holds them all', () => {
    expect(toolsMissingMessage(['newuidmap', 'newgidmap', 'unshare'])).toBe(
      'newuidmap and newgidmap and unshare are not installed on this host: install the Debian packages uidmap util-linux (apt-get install uidmap util-linux, or bash scripts/prereqs.sh build for every tool of image builds)',
    );
    expect(packagesOf(['qemu-system-x86_64'])).toEqual([hostTools.boot['qemu-system-x86_64']]);
    expect(toolsMissingMessage(['qemu-system-x86_64'])).toContain('bash scripts/prereqs.sh boot for every tool of the boot check');
  });
});
