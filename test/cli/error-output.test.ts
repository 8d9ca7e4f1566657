// What a user sees when things go wrong, through the real command line (a child process): a binary
// file, a file over the size bound and a README are refused in a few bounded lines at
// file:line:column, a file of thousands of problems lists the first ones and counts the others, system
// error codes come in words, and no internal prefix or code reaches the user.
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROBLEMS_LISTED } from '../../src/engine';
import { examplesWorkspace } from '../engine/helpers/service';
import { cliBundle, runCli, type CliRun } from './helpers/cli';

const root = path.resolve(__dirname, '../..');

/** Codes such as ENOENT, EISDIR, MULTILINE_IMPLICIT_KEY, or a class's prefix: none may reach the user. */
function expectNoInternals(r: CliRun): void {
  const all = r.stdout + r.stderr;
  expect(all).not.toMatch(/\bE[A-Z]{3,}\b|\b[A-Z]+_[A-Z_]+\b|createClient|Error:/);
}

describe('error output', () => {
  let dir: string;
  beforeAll(() => {
    cliBundle();
    dir = mkdtempSync(path.join(tmpdir(), 'af-errors-'));
  });

  it('a binary file and a file over 1 MiB: one line each, at file:line:column, in words (validate and plan)', async () => {
    // The case: 3 MB of random bytes printed 7 MB.
    writeFileSync(path.join(dir, 'random.bin'), randomBytes(3 * 1024 * 1024));
    // Text, then a byte that is never UTF-8, then noise: the position is where the text ends.
    writeFileSync(path.join(dir, 'small.bin'), Buffer.concat([Buffer.from('stack:\n  name: x\n'), Buffer.from([0xff]), randomBytes(200_000)]));
    const big = await runCli(['validate', 'random.bin'], { cwd: dir });
    expect(big.code).toBe(2);
    expect(big.stderr).toBe('random.bin:1:1: error: larger than 1 MiB: too large for a YAML or JSON declaration\n');
    expect(big.stdout).toBe('random.bin: invalid (1 error, 0 warnings)\n');
    const bin = await runCli(['validate', 'small.bin'], { cwd: dir });
    expect(bin.stderr).toBe('small.bin:3:1: error: binary data, not YAML or JSON text\n');
    const plan = await runCli(['plan', 'small.bin'], { cwd: dir });
    expect(plan.code).toBe(2);
    expect(plan.stderr).toBe('1 problem in the declaration:\nsmall.bin:3:1: error: binary data, not YAML or JSON text\n');
    for (const r of [big, bin, plan]) expectNoInternals(r);
  });

  it('thousands of problems: the first ones, then "… and K more"; the counts stay exact, in JSON too', async () => {
    writeFileSync(path.join(dir, 'dups.yml'), 'a: 1\n'.repeat(2000));
    const r = await runCli(['validate', 'dups.yml'], { cwd: dir });
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(PROBLEMS_LISTED + 1);
    expect(lines[0]).toBe('dups.yml:2:1: error: map keys must be unique');
    expect(lines.at(-1)).toBe(`… and ${1999 - PROBLEMS_LISTED} more problems`);
    expect(r.stdout).toBe('dups.yml: invalid (1999 errors, 0 warnings)\n');
    const j = await runCli(['validate', 'dups.yml', '--json'], { cwd: dir });
    const doc = JSON.parse(j.stdout) as { errors: number; problems: unknown[]; more: number };
    expect([doc.errors, doc.problems.length, doc.more]).toEqual([1999, PROBLEMS_LISTED, 1999 - PROBLEMS_LISTED]);
    const plan = await runCli(['plan', 'dups.yml', '--json'], { cwd: dir });
    expect(plan.code).toBe(2);
    const failed = JSON.parse(plan.stdout) as { error: { message: string; problems: unknown[]; more: number } };
    expect([failed.error.problems.length, failed.error.more]).toEqual([PROBLEMS_LISTED, 1999 - PROBLEMS_LISTED]);
    expect(failed.error.message.split('\n')).toHaveLength(PROBLEMS_LISTED + 2);
  });

  it('YAML errors of a README: the position once, no trailing colon, quoted text cut to about 100 characters', async () => {
    // The case: `validate README.md` printed 61 KB.
    copyFileSync(path.join(root, 'README.md'), path.join(dir, 'README.md'));
    const r = await runCli(['validate', 'README.md'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(6 * 1024);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.length).toBeLessThanOrEqual(PROBLEMS_LISTED + 1);
    for (const l of lines.filter((x) => !x.startsWith('…'))) {
      expect(l).toMatch(/^README\.md:\d+:\d+: error: [a-z]/);
      expect(l).not.toMatch(/ at line \d+|:$/);
      expect(l.length).toBeLessThan(260);
    }
    // The parser quotes whole paragraphs: cut, with an ellipsis.
    expect(r.stderr).toMatch(/: ".{90,100}…"\n/);
  });

  it('system errors in words: no such file, a folder, a path through a file; a bad URL is a usage error (exit 2)', async () => {
    mkdirSync(path.join(dir, 'folder'), { recursive: true });
    writeFileSync(path.join(dir, 'plain-file'), 'x');
    const missing = await runCli(['validate', 'nope.yml'], { cwd: dir });
    expect(missing.stderr).toBe('nope.yml:1:1: error: no such file or folder\n');
    const folder = await runCli(['validate', 'folder'], { cwd: dir });
    expect(folder.stderr).toBe('folder:1:1: error: is a folder\n');
    const users = await runCli(['users', 'add', 'carol', '--data-dir', 'plain-file/data'], { cwd: dir });
    expect(users.code).toBe(1);
    expect(users.stderr).toBe(`appliance-forge users: ${path.join(dir, 'plain-file', 'data')}: a part of the path is not a folder\n`);

    const ws = examplesWorkspace();
    const noCreds = await runCli(['plan', 'local.yml', '-c', 'nope.yml'], { cwd: ws });
    expect(noCreds.code).toBe(2);
    expect(noCreds.stderr).toBe('appliance-forge plan: --credentials nope.yml: no such file or folder\n');
    // Not YAML: the position, never the file's text (it holds a secret key).
    writeFileSync(path.join(ws, 'creds.yml'), 'url: [x\n  secretkey: s3cret-key-never-shown\n', { mode: 0o600 });
    const badCreds = await runCli(['plan', 'local.yml', '-c', 'creds.yml'], { cwd: ws });
    expect(badCreds.code).toBe(2);
    expect(badCreds.stderr).toMatch(/^appliance-forge plan: --credentials creds\.yml:\d+:\d+: [a-z][^:"]+\n$/);
    const badUrl = await runCli(['plan', 'local.yml', '--url', 'forge.example.com/api', '-u', 'alice', '-p', 'alice-password'], { cwd: ws });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toBe('plan failed: the service URL "forge.example.com/api" is not a URL\n');
    const refused = await runCli(['plan', 'local.yml', '--url', 'http://127.0.0.1:9/api', '-u', 'alice', '-p', 'alice-password', '-q'], { cwd: ws });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^plan failed: cannot reach the service: GET \/\S+ could not connect: connection refused \(127\.0\.0\.1:9\)\n$/);
    for (const r of [missing, folder, users, noCreds, badCreds, badUrl, refused]) {
      expectNoInternals(r);
      expect(r.stderr).not.toContain('s3cret-key-never-shown');
    }
  });
});
