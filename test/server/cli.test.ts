// The command line, built (`npx tsc -p tsconfig.json` first): users add prints the key pair; serve
// prints one line with the base URL and stops gracefully on SIGTERM. A first start (no start index yet)
// stays within 150 MiB: the catalogs are parsed by the index writer process, not by the server. A cache
// folder the builds' namespace cannot reach is named at start, and a build failing on it says so (not "a
// tool is missing") with the whole error, path included, in the server's output only.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client';
import { JobFailedError } from '../../src/client/errors';
import { currentSandbox } from '../../src/host/sandbox';
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

  const sandbox = currentSandbox();
  it.runIf(sandbox.kind === 'userns' && !sandbox.self)('a cache folder builds cannot reach: said at start, and by the failed build in its own words', async () => {
    const dir = tempDir();
    // Every folder above passable, so that `closed` is the one that blocks.
    for (const d of [dirname(dir), dir]) chmodSync(d, 0o711);
    const closed = join(dir, 'closed');
    mkdirSync(join(closed, 'cache'), { recursive: true });
    chmodSync(closed, 0o700);
    const key = JSON.parse(execFileSync(process.execPath, [MAIN, 'users', 'add', 'erin', '--data-dir', join(dir, 'data'), '--json'], { encoding: 'utf8' })) as { publicKey: string; secretKey: string };
    const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--cache-dir', join(closed, 'cache'), '--no-catalog-refresh', '-q'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const c = await (async () => {
      for (let i = 0; i < 300 && !out.includes('\n'); i++) await new Promise((r) => setTimeout(r, 100));
      return createClient({ url: out.split('\n')[0]!.trim(), auth: { login: 'erin', ...key }, retry: false });
    })();
    try {
      // Said at start even with -q, naming the folder that blocks and what to change.
      expect(err).toContain(`but the cache folder ${join(closed, 'cache')} cannot be reached from the build's user namespace: ${closed} lets no other user through (chmod o+x ${closed}`);
      const app = await c.appliance_create({ uid: 'erin', body: { name: 'closed', version: '1', distributionUri: 'distributions/1' } });
      await c.applianceOSProfile_create({ uid: 'erin', aid: app.dbId!, body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: 'distributions/1/profiles/1' } });
      const img = await c.machineImage_generate({ uid: 'erin', aid: app.dbId!, body: { targetFormat: { name: 'QCOW2' } } });
      const failed = await c.waitForJob(`users/erin/appliances/${app.dbId!}/images/${img.dbId!}`, { timeoutMs: 120_000, pollMs: 200 }).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(JobFailedError);
      const { status } = failed as JobFailedError;
      expect(status.error).toBe(true);
      expect(status.errorMessage).toMatch(/a folder this server builds in \(its cache or work folder\) cannot be reached by its builds/);
      expect(status.errorMessage).not.toContain(dir);
      expect(status.errorMessage).not.toMatch(/lacks a tool/);
      // The operator's copy (without --log): the whole error with its path, in one line on stderr.
      const logged = err.split('\n').filter((l) => l.includes(`image:${img.dbId!} failed`));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain(`${closed} lets no other user through`);
    } finally {
      await c.close();
      await new Promise((res) => {
        child.once('exit', res);
        child.kill('SIGTERM');
      });
    }
  }, 180_000);

  it('exits 2 on an unknown command or bad options', () => {
    expect(() => execFileSync(process.execPath, [MAIN, 'nope'], { stdio: 'pipe' })).toThrow(expect.objectContaining({ status: 2 }));
    expect(() => execFileSync(process.execPath, [MAIN, 'serve', '--port', 'x'], { stdio: 'pipe' })).toThrow(expect.objectContaining({ status: 2 }));
  });
});
