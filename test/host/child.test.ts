// A program started through diesWithParent dies when the process that started it is SIGKILLed: the
// guarantee that keeps a killed server's build children from writing into its next start's work area.
// The parent is a real node process running the compiled module; the check is /proc and kill(pid, 0).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diesWithParent } from '../../src/host/child';

const compiled = path.resolve(__dirname, '../../dist/src/host/child.js');
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('diesWithParent', () => {
  it('wraps the program in setpriv --pdeathsig KILL, keeping its arguments', () => {
    const [cmd, args] = diesWithParent('cp', ['-a', 'x y', '--', 'z']);
    expect(path.basename(cmd)).toBe('setpriv');
    expect(args).toEqual(['--pdeathsig', 'KILL', '--', 'cp', '-a', 'x y', '--', 'z']);
  });

  it('the child is gone once its parent is SIGKILLed; an unguarded one outlives it', async () => {
    const script = `
      const { spawn } = require('node:child_process');
      const { diesWithParent } = require(${JSON.stringify(compiled)});
      const [c, a] = diesWithParent('sleep', ['300']);
      const guarded = spawn(c, a, { stdio: 'ignore' });
      const bare = spawn('sleep', ['301'], { stdio: 'ignore', detached: true });
      console.log(JSON.stringify({ guarded: guarded.pid, bare: bare.pid }));
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pids = await new Promise<{ guarded: number; bare: number }>((resolve) => {
      parent.stdout.once('data', (b: Buffer) => resolve(JSON.parse(b.toString()) as { guarded: number; bare: number }));
    });
    // setpriv has exec'd sleep once /proc shows it as sleep.
    for (let i = 0; i < 100 && readFileSync(`/proc/${pids.guarded}/comm`, 'utf8').trim() !== 'sleep'; i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pids.guarded)).toBe(true);
    parent.kill('SIGKILL');
    await new Promise((r) => parent.once('exit', r));
    for (let i = 0; i < 100 && alive(pids.guarded); i++) await new Promise((r) => setTimeout(r, 20));
    try {
      expect(alive(pids.guarded)).toBe(false);
      expect(alive(pids.bare)).toBe(true);
    } finally {
      process.kill(pids.bare, 'SIGKILL');
    }
  });
});
