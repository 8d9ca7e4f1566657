// The command line, built (`npx tsc -p tsconfig.json` first): users add prints the key pair; serve
// prints one line with the base URL and stops gracefully on SIGTERM. A first start (no start index yet)
// stays within 150 MiB: the catalogs are parsed by the index writer process, not by the server.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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
    // The catalog answers (through the index its first start wrote), and the start's peak stayed low.
    for (const os of (await c.os_getAll({ params: { query: "name=='Debian'" } })).distributions!) {
      expect((await c.osPkg_getAll({ id: os.dbId!, params: { query: 'name==nginx;arch==amd64', latestOnly: true } })).pkgs).toHaveLength(1);
    }
    const peakMiB = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid!}/status`, 'utf8'))![1]) / 1024;
    expect(peakMiB).toBeLessThanOrEqual(150);
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
