// A checkout that plants things in the embedded server's data folder (`./.appliance-forge`): a link
// for `tmp/` or `images/` (the start-up sweep would empty its target), a dangling `credentials.json`
// link (the first write would create its target), another user's folder, a committed database or key
// file. `plan` needs no secret, so a fork's pull request can run it; the real CLI must refuse each one,
// say which path, exit 1, and leave everything outside the folder as it was.
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server';
import { examplesWorkspace } from '../engine/helpers/service';
import { cliBundle, runCli } from '../cli/helpers/cli';

/** A folder outside the workspace holding one file: it must survive. */
function canary(): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'af-canary-'));
  const file = path.join(dir, 'keep-me.txt');
  writeFileSync(file, 'still here\n');
  return { dir, file };
}

const plan = (cwd: string) => runCli(['plan', 'local.yml', '--quiet'], { cwd });

describe('the data folder of the embedded server is never trusted blindly', () => {
  beforeAll(() => {
    cliBundle();
  });

  for (const sub of ['tmp', 'images'] as const) {
    it(`a symlinked .appliance-forge/${sub}: plan fails naming it, and the link's target keeps its file`, async () => {
      const ws = examplesWorkspace();
      const c = canary();
      mkdirSync(path.join(ws, '.appliance-forge'), { mode: 0o700 });
      symlinkSync(c.dir, path.join(ws, '.appliance-forge', sub));
      const r = await plan(ws);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`unsafe data folder: ${path.join(ws, '.appliance-forge', sub)} is a symbolic link`);
      expect(existsSync(c.file)).toBe(true);
      expect(readdirSync(c.dir)).toEqual(['keep-me.txt']);
    });
  }

  it('a dangling credentials.json link is refused, never followed: its target is not created', async () => {
    const ws = examplesWorkspace();
    const c = canary();
    const target = path.join(c.dir, 'planted.json');
    mkdirSync(path.join(ws, '.appliance-forge'), { mode: 0o700 });
    symlinkSync(target, path.join(ws, '.appliance-forge', 'credentials.json'));
    const r = await plan(ws);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${path.join(ws, '.appliance-forge', 'credentials.json')} is a symbolic link`);
    expect(existsSync(target)).toBe(false);
  });

  it('a data folder owned by another user is refused, naming the folder and the owner', async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip('not root: cannot give a folder to another user');
    const ws = examplesWorkspace();
    const data = path.join(ws, '.appliance-forge');
    mkdirSync(data, { mode: 0o700 });
    chownSync(data, 12345, 12345);
    const r = await plan(ws);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`unsafe data folder: ${data} belongs to uid 12345, not to this user`);
    expect(readdirSync(data)).toEqual([]);
  });

  it('a committed data folder is not opened: key files as git writes them (0644), or a forge.db without its secret.key', async () => {
    const first = examplesWorkspace();
    const ok = await plan(first);
    expect(ok.code, ok.stderr).toBe(0);
    // As a checkout has them: the same files, mode 0644.
    const ws = examplesWorkspace();
    const data = path.join(ws, '.appliance-forge');
    mkdirSync(data);
    for (const f of ['forge.db', 'secret.key', 'credentials.json']) {
      copyFileSync(path.join(first, '.appliance-forge', f), path.join(data, f));
      chmodSync(path.join(data, f), 0o644);
    }
    const r = await plan(ws);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/unsafe data folder: \S+\/\.appliance-forge\/(credentials\.json|secret\.key) is open to other users \(mode 0644\)/);
    // A database alone: not made by appliance-forge.
    const lone = examplesWorkspace();
    mkdirSync(path.join(lone, '.appliance-forge'));
    copyFileSync(path.join(first, '.appliance-forge', 'forge.db'), path.join(lone, '.appliance-forge', 'forge.db'));
    const r2 = await plan(lone);
    expect(r2.code, r2.stderr).toBe(1);
    expect(r2.stderr).toContain(`${path.join(lone, '.appliance-forge', 'forge.db')} is there without secret.key`);
  });

  it('the start-up sweep removes a link found in tmp/ or images/ itself, never its target', async () => {
    const data = mkdtempSync(path.join(tmpdir(), 'af-data-'));
    const c = canary();
    for (const sub of ['tmp', 'images']) {
      mkdirSync(path.join(data, sub), { mode: 0o700 });
      symlinkSync(c.dir, path.join(data, sub, 'leftover'));
    }
    const server = await startServer({ dataDir: data, port: 0 });
    await server.close();
    expect(readdirSync(path.join(data, 'tmp'))).toEqual([]);
    expect(readdirSync(path.join(data, 'images'))).toEqual([]);
    expect(readdirSync(c.dir)).toEqual(['keep-me.txt']);
  });
});
