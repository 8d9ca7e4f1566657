// The command line, built (`npx tsc -p tsconfig.json` first): users add prints the key pair; serve
// prints one line with the base URL and stops gracefully on SIGTERM.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client';
import { tempDir } from './helpers';

const MAIN = resolve(__dirname, '../../dist/src/cli/main.js');

describe.skipIf(!existsSync(MAIN))('command line', () => {
  it('users add --json, then serve until SIGTERM', async () => {
    const dir = tempDir();
    const out = execFileSync(process.execPath, [MAIN, 'users', 'add', 'dana', '--password', 'pw', '--admin', '--data-dir', dir, '--json'], { encoding: 'utf8' });
    const key = JSON.parse(out) as { login: string; publicKey: string; secretKey: string };
    expect(key.login).toBe('dana');
    expect(() => execFileSync(process.execPath, [MAIN, 'users', 'add', 'dana', '--data-dir', dir], { stdio: 'pipe' })).toThrow();

    const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--data-dir', dir, '--no-catalog-refresh'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await new Promise<string>((res) => child.stdout.once('data', (b: Buffer) => res(b.toString().trim())));
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    const c = createClient({ url, auth: key, retry: false });
    expect((await c.user_get({ uid: 'dana' })).admin).toBe(true);
    await c.close();
    const code = await new Promise<number | null>((res) => {
      child.once('exit', res);
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
  });

  it('exits 2 on an unknown command or bad options', () => {
    expect(() => execFileSync(process.execPath, [MAIN, 'nope'], { stdio: 'pipe' })).toThrow(expect.objectContaining({ status: 2 }));
    expect(() => execFileSync(process.execPath, [MAIN, 'serve', '--port', 'x'], { stdio: 'pipe' })).toThrow(expect.objectContaining({ status: 2 }));
  });
});
