// `plan --json` and `plan --detailed-exitcode` through the real CLI against the real reference server:
// one JSON document, one object per planned item {kind, name, action, before, after}, secrets masked;
// exit 2 when an apply would change something, 1 on any error (as `terraform plan -detailed-exitcode`).
// The "no changes → 0" case needs a built image: it is in plan-apply.test.ts, after its apply.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, runCli } from './helpers/cli';

interface Change { kind: string; name: string; action: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null; reason?: string }

describe('plan --json / --detailed-exitcode', () => {
  let svc: TestService;
  let env: Record<string, string>;
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
    env = { APPLIANCE_FORGE_URL: svc.server.url, APPLIANCE_FORGE_USER: svc.login, APPLIANCE_FORGE_API_KEY: svc.publicKey, APPLIANCE_FORGE_SECRET_KEY: svc.secretKey };
  });
  afterAll(async () => svc?.close());

  it('prints one document with one object per change, file hashes as sha256sum computes them, no secret', async () => {
    const dir = examplesWorkspace();
    const r = await runCli(['plan', 'examples-not-there.yml', '--json'], { cwd: dir, env });
    expect(r.code).toBe(2);
    const plan = await runCli(['plan', 'local.yml', '--json'], { cwd: dir, env });
    expect(plan.code, plan.stderr).toBe(0);
    // stderr holds the progress as JSON Lines, nothing else.
    for (const l of plan.stderr.trim().split('\n')) expect(JSON.parse(l)).toMatchObject({ type: 'phase' });
    const doc = JSON.parse(plan.stdout) as { ok: boolean; summary: { changes: boolean }; changes: Change[] };
    expect(doc.ok).toBe(true);
    expect(doc.summary.changes).toBe(true);
    for (const c of doc.changes) expect(Object.keys(c).slice(0, 5)).toEqual(['kind', 'name', 'action', 'before', 'after']);
    const by = (kind: string) => doc.changes.filter((c) => c.kind === kind);
    expect(by('appliance')).toEqual([{ kind: 'appliance', name: 'example-web 1.0', action: 'create', before: null, after: { name: 'example-web', version: '1.0', description: 'nginx serving a static page' } }]);
    expect(by('os-profile')).toMatchObject([{ name: 'Minimal', action: 'create', before: null }]);
    expect(by('package').map((c) => [c.name.split(' ')[0], c.action, c.before])).toEqual([['curl', 'create', null], ['nginx', 'create', null]]);
    expect(by('software')).toMatchObject([{ name: 'example-site 1.0', action: 'create', before: null, after: { files: ['index.html', 'default'] } }]);
    const files = by('file');
    expect(files.map((f) => [f.name, f.action])).toEqual([['example-site/index.html', 'create'], ['example-site/default', 'create']]);
    for (const [f, src] of [[files[0]!, 'files/index.html'], [files[1]!, 'files/site.conf']] as const) {
      expect(f.after!.sha256).toBe(execFileSync('sha256sum', [path.join(dir, src)], { encoding: 'utf8' }).split(' ')[0]);
    }
    expect(by('image')).toMatchObject([{ name: 'QCOW2', action: 'generate', before: null, after: { format: 'QCOW2', installProfile: { diskSize: 2048, memorySize: 1024 }, builders: [0] }, reason: 'new appliance' }]);
    // local.yml's root password is a secret: it appears nowhere, masked or not.
    expect(plan.stdout).not.toContain('forge-demo');
    expect(plan.stdout).not.toContain(svc.secretKey);
  });

  it('a Debian 12 declaration still plans against Debian 12 (distribution 1): its profile and its packages', async () => {
    const dir = examplesWorkspace();
    // examples/local.yml is Debian 13; the same file on Debian 12.
    writeFileSync(path.join(dir, 'local12.yml'), readFileSync(path.join(dir, 'local.yml'), 'utf8').replace("version: '13'", "version: '12'"));
    const plans = await Promise.all(['local.yml', 'local12.yml'].map((f) => runCli(['plan', f, '--json'], { cwd: dir, env })));
    const [now, old] = plans.map((r) => {
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { changes: Change[] }).changes;
    });
    const pkgs = (cs: Change[]) => cs.filter((c) => c.kind === 'package').map((c) => (c.after as { uri: string }).uri);
    expect(pkgs(old!).every((u) => u.startsWith('distributions/1/pkgs/'))).toBe(true);
    expect(pkgs(now!).every((u) => u.startsWith('distributions/3/pkgs/'))).toBe(true);
    expect(pkgs(old!)).toHaveLength(2);
    expect(pkgs(now!)).toHaveLength(2);
  });

  it('--detailed-exitcode: 2 when changes are present, 1 for an invalid file or a usage error, never 2 for an error', async () => {
    const dir = examplesWorkspace();
    const changes = await runCli(['plan', 'local.yml', '--detailed-exitcode'], { cwd: dir, env });
    expect(changes.code, changes.stderr).toBe(2);
    expect(changes.stdout).toContain('+ image QCOW2: generate');
    const plain = await runCli(['plan', 'local.yml'], { cwd: dir, env });
    expect(plain.code).toBe(0);
    writeFileSync(path.join(dir, 'bad.yml'), 'stack:\n  name: x\n');
    const bad = await runCli(['plan', 'bad.yml', '--detailed-exitcode'], { cwd: dir, env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('bad.yml:2:3: error: stack.version is required');
    expect((await runCli(['plan', 'bad.yml'], { cwd: dir, env })).code).toBe(2);
    const usage = await runCli(['plan', '--detailed-exitcode'], { cwd: dir, env });
    expect(usage.code).toBe(1);
    const refused = await runCli(['plan', 'local.yml', '--detailed-exitcode'], { cwd: dir, env: { ...env, APPLIANCE_FORGE_SECRET_KEY: 'wrong-secret-key-123' } });
    expect(refused.code).toBe(1);
  });

  it('--no-publish needs none of the variables of the publications and accounts; without it each is named', async () => {
    const dir = examplesWorkspace();
    const publishing = await runCli(['plan', 'appliance.yml', '--json'], { cwd: dir, env });
    expect(publishing.code).toBe(2);
    const named = (JSON.parse(publishing.stdout) as { error: { problems: Array<{ message: string }> } }).error.problems.map((p) => /variable (\w+)/.exec(p.message)?.[1]);
    expect(named.sort()).toEqual(['OPENSTACK_GLANCE_URL', 'OS_AUTH_URL', 'OS_PASSWORD', 'OS_PROJECT_NAME', 'OS_USERNAME', 'OS_USER_DOMAIN_NAME']);
    const r = await runCli(['plan', 'appliance.yml', '--json', '--no-publish'], { cwd: dir, env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { summary: { publish: number }; changes: Change[] };
    expect(doc.summary.publish).toBe(0);
    expect(doc.changes.filter((c) => c.kind === 'image').map((c) => c.name)).toEqual(['QCOW2', 'OpenStack QCOW2']);
    expect(doc.changes.filter((c) => c.kind === 'publication')).toEqual([]);
  });

  it('an image format the service does not offer: the same message as validate\'s, with the name meant', async () => {
    const dir = examplesWorkspace();
    writeFileSync(path.join(dir, 'case.yml'), readFileSync(path.join(dir, 'local.yml'), 'utf8').replace('type: QCOW2', 'type: qcow2'));
    const plan = await runCli(['plan', 'case.yml'], { cwd: dir, env });
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(/case\.yml:\d+:11: error: unknown image format "qcow2" \(the service offers: OpenStack QCOW2, [^)]*\); did you mean "QCOW2"\?/);
    const offline = await runCli(['validate', 'case.yml'], { cwd: dir });
    expect(offline.code).toBe(2);
    expect(offline.stderr).toContain('error: unknown image format "qcow2" (the reference server offers: OpenStack QCOW2,');
  });
});
