// The build farm of docs/server.md as systemd units ("Running a build farm"): its environment file, API
// unit and worker template are read from that page itself, checked with `systemd-analyze verify`, then run as
// systemd would run them (the ExecStart command line, the EnvironmentFile's variables, %i, SIGTERM to
// stop) against PostgreSQL and S3 on 127.0.0.1: one API node and two workers build a real image. Only
// the places are changed: the binary (this checkout's CLI), the folders, the key, the database and bucket,
// and the API's address (127.0.0.1 and any free port: tests bind loopback only).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client';
import { CLI, farmServices, farmUnavailable } from '../support/farm';
import { freshDatabase } from '../support/postgres';

const ROOT = path.resolve(__dirname, '../..');
const hasAnalyze = (() => {
  try {
    execFileSync('systemd-analyze', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const skip = farmUnavailable() ?? (hasAnalyze ? undefined : 'no systemd-analyze (Debian package systemd)');
if (skip) console.warn(`SKIP the farm units of docs/server.md: ${skip}`);

/** The fenced block of docs/server.md whose first line is `# <file>` (its path after the marker). */
function readmeFile(name: string): string {
  const readme = readFileSync(path.join(ROOT, 'docs/server.md'), 'utf8');
  const block = [...readme.matchAll(/```ini\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.startsWith(`# ${name}`));
  if (!block) throw new Error(`docs/server.md has no ini block starting "# ${name}"`);
  return block;
}

/** `[Service]`'s keys of a unit (the last value of each). */
function serviceOf(unit: string): Record<string, string> {
  const section = /\[Service\]\n([\s\S]*?)(?:\n\[|$)/.exec(unit)?.[1] ?? '';
  return Object.fromEntries(section.split('\n').filter((l) => /^\w+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

interface Unit {
  proc: ChildProcess;
  lines: string[];
}

describe.skipIf(skip !== undefined)('the farm of docs/server.md as systemd units', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'forge-units-'));
  const units: Unit[] = [];
  let drop = async (): Promise<void> => undefined;
  let env: Record<string, string> = {};
  let unitFiles: { api: string; worker: string } = { api: '', worker: '' };

  beforeAll(async () => {
    const { pg, s3 } = await farmServices();
    const db = await freshDatabase(pg);
    drop = db.drop;
    const bin = path.join(dir, 'appliance-forge');
    writeFileSync(bin, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
    chmodSync(bin, 0o755);
    const key = path.join(dir, 'secret.key');
    writeFileSync(key, randomBytes(32).toString('base64'), { mode: 0o600 });
    const place = (text: string): string =>
      text
        .replaceAll('/usr/local/bin/appliance-forge', bin)
        .replaceAll('/etc/appliance-forge/secret.key', key)
        .replaceAll('/etc/appliance-forge/farm.env', path.join(dir, 'farm.env'))
        .replaceAll('/var/lib/appliance-forge', path.join(dir, 'lib'))
        .replace('--host 0.0.0.0 --port 8080', '--host 127.0.0.1 --port 0');
    // The environment file's keys, with this machine's database, bucket and credentials.
    const given: Record<string, string> = {
      APPLIANCE_FORGE_DATABASE_URL: db.url,
      APPLIANCE_FORGE_BLOB_STORE: s3.url(`units-${randomBytes(4).toString('hex')}`),
      AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    };
    const envFile = readmeFile('/etc/appliance-forge/farm.env');
    const keys = envFile.split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.slice(0, l.indexOf('=')));
    expect(keys.sort()).toEqual(Object.keys(given).sort());
    writeFileSync(path.join(dir, 'farm.env'), keys.map((k) => `${k}=${given[k]}`).join('\n'), { mode: 0o600 });
    env = { ...given, AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED', AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED' };
    mkdirSync(path.join(dir, 'units'));
    unitFiles = {
      api: place(readmeFile('/etc/systemd/system/appliance-forge-api.service')),
      worker: place(readmeFile('/etc/systemd/system/appliance-forge-worker@.service')),
    };
    writeFileSync(path.join(dir, 'units', 'appliance-forge-api.service'), unitFiles.api);
    writeFileSync(path.join(dir, 'units', 'appliance-forge-worker@.service'), unitFiles.worker);
  }, 300_000);
  afterAll(async () => {
    for (const u of units) if (u.proc.exitCode === null) u.proc.kill('SIGKILL');
    await drop();
  });

  it('systemd-analyze verify accepts the API unit and the worker template', () => {
    for (const unit of ['appliance-forge-api.service', 'appliance-forge-worker@1.service']) {
      execFileSync('systemd-analyze', ['verify', path.join(dir, 'units', unit)], { stdio: 'pipe' });
    }
  });

  it('run as systemd would, one API node and two workers build an image; SIGTERM stops each cleanly', async () => {
    const run = (unit: string, instance?: string): Unit => {
      const s = serviceOf(unit);
      expect(s.EnvironmentFile).toBe(path.join(dir, 'farm.env'));
      const argv = s.ExecStart!.replaceAll('%i', instance ?? '').split(' ');
      const proc = spawn(argv[0]!, argv.slice(1), { env: { PATH: process.env.PATH ?? '', TMPDIR: process.env.TMPDIR ?? tmpdir(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      const u: Unit = { proc, lines: [] };
      const take = (c: Buffer): void => void u.lines.push(...c.toString('utf8').split('\n').filter(Boolean));
      proc.stdout.on('data', take);
      proc.stderr.on('data', take);
      units.push(u);
      return u;
    };
    const until = async <T>(fn: () => T | undefined, ms: number, what: string): Promise<T> => {
      const end = Date.now() + ms;
      for (;;) {
        const v = fn();
        if (v !== undefined) return v;
        if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms\n${units.flatMap((u) => u.lines).join('\n')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const api = run(unitFiles.api);
    const url = await until(() => api.lines.find((l) => /^http:\/\/127\.0\.0\.1:\d+\/api$/.test(l)), 60_000, 'the API unit');
    expect(api.lines.some((l) => /serve: role api, store postgres .* blobs s3 .* queue pg-boss/.test(l))).toBe(true);
    const workers = ['1', '2'].map((i) => run(unitFiles.worker, i));
    for (const w of workers) await until(() => w.lines.find((l) => /serve: role worker /.test(l)), 60_000, 'a worker unit');
    const health = (await (await fetch(`${url}/health`)).json()) as { status: string; store: { backend: string }; blobs: { backend: string } };
    expect(health).toMatchObject({ status: 'ok', role: 'api', store: { backend: 'postgres' }, blobs: { backend: 's3' } });

    // A user made as docs/server.md says, then a small image built by whichever worker claims it.
    const made = execFileSync(path.join(dir, 'appliance-forge'), ['users', 'add', 'alice', '--data-dir', path.join(dir, 'lib', 'admin'), '--secret-key-file', path.join(dir, 'secret.key'), '--json'], { env: { ...process.env, ...env } });
    const alice = JSON.parse(made.toString()) as { login: string; publicKey: string; secretKey: string };
    const c = createClient({ url, auth: alice, retry: false });
    try {
      const app = await c.appliance_create({ uid: 'alice', body: { name: 'unit', version: '1', distributionUri: 'distributions/1', installProfile: { diskSize: 1024 } } });
      await c.applianceOSProfile_create({ uid: 'alice', aid: app.dbId!, body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: 'distributions/1/profiles/1' } });
      const img = await c.machineImage_generate({ uid: 'alice', aid: app.dbId!, body: { targetFormat: { name: 'QCOW2' } } });
      const done = await c.waitForJob(img, { timeoutMs: 900_000, pollMs: 500 });
      expect(done.complete).toBe(true);
      const record = await c.machineImage_get({ uid: 'alice', aid: app.dbId!, itid: img.dbId! });
      const out = path.join(dir, 'unit.qcow2');
      await c.download(record.downloadUri!, { to: out });
      expect(createHash('sha256').update(readFileSync(out)).digest('hex')).toBe(record.sha256sum);
      expect(workers.some((w) => w.lines.some((l) => l.includes(`job image:${img.dbId!} ended on`)))).toBe(true);
    } finally {
      await c.close();
    }
    for (const u of [...workers, api]) {
      const exited = new Promise<number | null>((resolve) => u.proc.once('exit', (code) => resolve(code)));
      u.proc.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 1_200_000);
});
