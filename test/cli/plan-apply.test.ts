// The real command line (a child process) against the real reference server over HTTP on 127.0.0.1,
// and against the embedded server when no URL is given.
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplesWorkspace, openStackEnv, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, connectionEnv, runCli } from './helpers/cli';
import { createClient } from '../../src/client';
import { uriParams } from '../../src/model/uris';

const osEnv = openStackEnv();
if (!osEnv) console.warn('SKIP publication through the CLI: the real Keystone + Glance cannot start here');

const workspace = () => examplesWorkspace();

describe('appliance-forge plan / apply', () => {
  let svc: TestService;
  let creds: Record<string, string>;
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
    creds = connectionEnv(svc.server.url, svc);
  });
  afterAll(async () => svc?.close());

  it('applies local.yml, then reuses everything on a second run; plan --json says no changes', async () => {
    const dir = workspace();
    const first = await runCli(['apply', 'local.yml'], { cwd: dir, env: creds });
    expect(first.stderr).toContain('== Software bundles');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/QCOW2\s+generated\s+[\d.]+ MiB sha256 [0-9a-f]{64}/);
    const second = await runCli(['apply', 'local.yml', '--output', 'out'], { cwd: dir, env: creds });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/QCOW2\s+reused/);
    // --output: the image in the user's hands, checked by tools that are not ours.
    const announced = /sha256 ([0-9a-f]{64})/.exec(first.stdout)![1]!;
    const saved = /QCOW2\s+saved\s+(\S+) \(sha256 checked\)/.exec(second.stdout)?.[1];
    expect(saved, second.stdout).toBe(path.join(dir, 'out', 'example-web-1.0.qcow2'));
    expect(execFileSync('sha256sum', [saved!], { encoding: 'utf8' }).split(' ')[0]).toBe(announced);
    expect(JSON.parse(execFileSync('qemu-img', ['info', '--output=json', saved!], { encoding: 'utf8' })).format).toBe('qcow2');
    // Its SBOMs beside it, naming this very image and the packages dpkg installed in it.
    expect(second.stdout).toContain(`sbom      ${saved!}.spdx.json`);
    const spdx = JSON.parse(readFileSync(`${saved!}.spdx.json`, 'utf8')) as { packages: Array<{ SPDXID: string; name: string; checksums?: Array<{ checksumValue: string }> }> };
    expect(spdx.packages[0]).toMatchObject({ SPDXID: 'SPDXRef-Image', name: 'example-web-1.0.qcow2', checksums: [{ algorithm: 'SHA256', checksumValue: announced }] });
    const cdx = JSON.parse(readFileSync(`${saved!}.cdx.json`, 'utf8')) as { components: Array<{ name: string; purl?: string }> };
    expect(cdx.components.find((c) => c.name === 'nginx')?.purl).toMatch(/^pkg:deb\/debian\/nginx@[^?]+\?arch=amd64&distro=debian-13$/);
    expect(cdx.components.filter((c) => c.purl !== undefined)).toHaveLength(spdx.packages.length - 1);
    const third = await runCli(['apply', 'local.yml', '--output', 'out', '--json'], { cwd: dir, env: creds });
    expect(third.code, third.stderr).toBe(0);
    expect((JSON.parse(third.stdout) as { files: Array<{ kept: boolean; path: string }> }).files).toEqual([expect.objectContaining({ kept: true, path: saved })]);
    // The extension route by the client's own operation: the same bytes; an unknown format is a 404.
    const { imageUri } = (JSON.parse(third.stdout) as { files: Array<{ imageUri: string }> }).files[0]!;
    const client = createClient({ url: svc.server.url, auth: { login: svc.login, publicKey: svc.publicKey, secretKey: svc.secretKey } });
    try {
      const where = uriParams('machineImage_get', imageUri);
      await client.machineImageSbom_download({ ...where, format: 'cyclonedx', to: path.join(dir, 'again.cdx.json') });
      expect(readFileSync(path.join(dir, 'again.cdx.json'), 'utf8')).toBe(readFileSync(`${saved!}.cdx.json`, 'utf8'));
      await expect(client.machineImageSbom_download({ ...where, format: 'swid', to: path.join(dir, 'x') })).rejects.toMatchObject({ status: 404 });
    } finally {
      await client.close();
    }
    const noOut = await runCli(['plan', 'local.yml', '--output', 'out'], { cwd: dir, env: creds });
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain('--output goes with apply');
    const plan = await runCli(['plan', 'local.yml', '--json'], { cwd: dir, env: creds });
    expect(plan.code).toBe(0);
    const doc = JSON.parse(plan.stdout) as { ok: boolean; summary: { changes: boolean; reuseImages: number } };
    expect(doc).toMatchObject({ ok: true, summary: { changes: false, reuseImages: 1 } });
    for (const l of plan.stderr.trim().split('\n')) expect(JSON.parse(l)).toMatchObject({ type: 'phase' });
    // Converged: every planned item is a no-op, and --detailed-exitcode says "no changes" with 0.
    expect((JSON.parse(plan.stdout) as { changes: Array<{ action: string }> }).changes.map((c) => c.action).filter((a) => a !== 'unchanged' && a !== 'reuse')).toEqual([]);
    const detailed = await runCli(['plan', 'local.yml', '--detailed-exitcode'], { cwd: dir, env: creds });
    expect(detailed.code, detailed.stderr).toBe(0);
    for (const r of [first, second, plan]) expect(r.stdout + r.stderr).not.toContain(svc.secretKey);
  });

  it('flags win over the environment and a password works too', async () => {
    const dir = workspace();
    const r = await runCli(['plan', 'local.yml', '--url', svc.server.url, '--user', svc.login, '--api-key', svc.publicKey, '--secret-key', svc.secretKey],
      { cwd: dir, env: { APPLIANCE_FORGE_URL: 'http://127.0.0.1:9/api' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('image QCOW2');
  });

  it('an invalid file exits 2 with every problem at file:line:column', async () => {
    const dir = workspace();
    writeFileSync(path.join(dir, 'bad.yml'), 'stack:\n  name: x\n  os:\n    name: Debian\nbuilders:\n  - type: QCOW2\n    hardwareSettings: {memory: lots}\n');
    const r = await runCli(['apply', 'bad.yml'], { cwd: dir, env: creds });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad.yml:2:3: error: stack.version is required');
    expect(r.stderr).toContain('bad.yml:4:5: error: stack.os.version is required');
    expect(r.stderr).toContain('bad.yml:7:32: error: builders[0].hardwareSettings.memory must be a whole number of at least 1');
    const j = await runCli(['plan', 'bad.yml', '--json'], { cwd: dir, env: creds });
    expect(j.code).toBe(2);
    expect((JSON.parse(j.stdout) as { error: { problems: unknown[] } }).error.problems).toHaveLength(3);
  });

  it('a name the service does not know is a declaration problem too (exit 2)', async () => {
    const dir = workspace();
    const f = path.join(dir, 'local.yml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('      - nginx\n', '      - nginx\n      - no-such-package-xyz\n'));
    const r = await runCli(['plan', 'local.yml'], { cwd: dir, env: creds });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/local\.yml:15:9: error: package "no-such-package-xyz" not found in Debian 13 x86_64/);
  });

  it('a wrong secret key fails with a clear message and never prints the key', async () => {
    const dir = workspace();
    const wrong = 'WRONG-secret-key-0123456789';
    const r = await runCli(['apply', 'local.yml'], { cwd: dir, env: { ...creds, APPLIANCE_FORGE_SECRET_KEY: wrong } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the service refused the credentials \(401\)/);
    expect(r.stdout + r.stderr).not.toContain(wrong);
  });

  it('without a URL it starts the embedded server with a local user kept in ./.appliance-forge (0600)', async () => {
    const dir = workspace();
    const first = await runCli(['apply', 'local.yml'], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('using the embedded server');
    const credFile = path.join(dir, '.appliance-forge', 'credentials.json');
    expect(statSync(credFile).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(credFile, 'utf8')) as { secretKey: string };
    const second = await runCli(['apply', 'local.yml'], { cwd: dir });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/QCOW2\s+reused/);
    expect(first.stdout + first.stderr + second.stdout + second.stderr).not.toContain(saved.secretKey);
  });

  it('with --json and APPLIANCE_FORGE_LOG=debug, the embedded server\'s build stages come as JSON Lines debug records', async () => {
    const r = await runCli(['apply', 'local.yml', '--json'], { cwd: workspace(), env: { APPLIANCE_FORGE_LOG: 'debug' } });
    expect(r.code, r.stderr).toBe(0);
    // Every stderr line is a record (the build runs in this process: its notes go through the command's output).
    const records = r.stderr.trim().split('\n').map((l) => JSON.parse(l) as { level?: string; message: string });
    const stages = records.filter((x) => x.level === 'debug' && x.message.startsWith('build: ')).map((x) => x.message);
    expect(stages).toContainEqual(expect.stringMatching(/^build: writing the qcow2 file \d+\.\d\d s$/));
    expect(stages).toContainEqual(expect.stringMatching(/^build: disk stage \d+\.\d\d s$/));
  });

  it('SIGINT cancels the running generation on the service and exits non-zero', async () => {
    const dir = workspace();
    const f = path.join(dir, 'local.yml');
    writeFileSync(f, readFileSync(f, 'utf8').replace("version: '1.0'\n  description", "version: '9.9'\n  description"));
    let sent = false;
    const r = await runCli(['apply', 'local.yml'], {
      cwd: dir, env: creds,
      onStderr: (text, child) => {
        if (!sent && text.includes('generating')) {
          sent = true;
          child.kill('SIGINT');
        }
      },
    });
    expect(sent).toBe(true);
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/interrupted/);
    const c = svc.client();
    const app = (await c.appliance_getAll({ params: { query: "version=='9.9'" } })).appliances![0]!;
    const aid = app.uri!.split('/').pop()!;
    const imgs = (await c.machineImage_getAll({ aid })).images ?? [];
    const states = await Promise.all(imgs.map((i) => c.machineImageStatus_get({ aid, itid: i.uri!.split('/').pop()! })));
    expect(states.map((s) => s.cancelled)).toEqual([true]);
  });

  it.skipIf(!osEnv)('publishes appliance.yml to the real Glance; no secret in any output', async () => {
    const dir = workspace();
    const env = { ...creds, ...osEnv! };
    const r = await runCli(['apply', 'appliance.yml'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/published example-web-1\.0 → cloud id [0-9a-f-]{36}/);
    const again = await runCli(['apply', 'appliance.yml', '--json'], { cwd: dir, env });
    const doc = JSON.parse(again.stdout) as { result: { images: Array<{ reused: boolean; publication?: { reused: boolean } }> } };
    expect(doc.result.images.map((i) => [i.reused, i.publication?.reused])).toEqual([[true, undefined], [true, true]]);
    for (const s of [osEnv!.OS_PASSWORD!, svc.secretKey]) expect(r.stdout + r.stderr + again.stdout + again.stderr).not.toContain(s);
  });
});
