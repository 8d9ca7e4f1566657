// `appliance-forge validate FILE` through the real CLI, offline: no service URL, no credentials, no
// network, and nothing written (no embedded server starts).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { examplesWorkspace } from '../engine/helpers/service';
import { cliBundle, runCli } from './helpers/cli';

describe('appliance-forge validate', () => {
  beforeAll(() => {
    cliBundle();
  });

  it('accepts the examples with no service and no secrets, naming the variables plan and apply will need', async () => {
    const dir = examplesWorkspace();
    const local = await runCli(['validate', 'local.yml'], { cwd: dir });
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).toBe('local.yml: valid (0 errors, 0 warnings)\n');
    const pub = await runCli(['validate', 'appliance.yml'], { cwd: dir });
    expect(pub.code, pub.stderr).toBe(0);
    expect(pub.stderr).toContain('appliance.yml:44:21: warning: builders[1].keystoneDomain: environment variable OS_USER_DOMAIN_NAME is not set (plan and apply will need it)');
    expect(pub.stdout).toContain('valid (0 errors, 6 warnings); reads ${env:OPENSTACK_GLANCE_URL}, ${env:OS_AUTH_URL}, ${env:OS_PASSWORD}, ${env:OS_PROJECT_NAME}, ${env:OS_USERNAME}, ${env:OS_USER_DOMAIN_NAME}');
    // Offline: no embedded server ran, so no data folder appeared.
    expect(existsSync(path.join(dir, '.appliance-forge'))).toBe(false);
  });

  it('a typo is a warning with a suggestion, an error with --strict; platform keys are named; exit 0/1', async () => {
    const dir = examplesWorkspace();
    const f = path.join(dir, 'local.yml');
    writeFileSync(f, readFileSync(f, 'utf8')
      .replace("  version: '1.0'\n  description", "  version: '1.0'\n  versoin: '1.1'\n  description")
      .replace('  bundles:\n', '  config:\n    - {name: s.sh, source: files/index.html}\n  bundles:\n'));
    const lax = await runCli(['validate', 'local.yml'], { cwd: dir });
    expect(lax.code, lax.stderr).toBe(0);
    expect(lax.stderr).toContain('local.yml:6:3: warning: unknown field "versoin" in stack (ignored); did you mean "version"?');
    expect(lax.stderr).toMatch(/local\.yml:\d+:3: warning: field "config" in stack is a key of the platform tool's format that appliance-forge does not support \(configuration scripts\): ignored/);
    const strict = await runCli(['validate', 'local.yml', '--strict'], { cwd: dir });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('local.yml:6:3: error: unknown field "versoin" in stack; did you mean "version"?');
    expect(strict.stdout).toBe('local.yml: invalid (2 errors, 0 warnings)\n');
    const json = await runCli(['validate', 'local.yml', '--strict', '--json'], { cwd: dir });
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout) as { ok: boolean; errors: number; problems: Array<{ line: number; severity: string; message: string }> };
    expect(doc).toMatchObject({ ok: false, errors: 2 });
    expect(doc.problems[0]).toMatchObject({ line: 6, severity: 'error' });
  });

  it('a missing bundle file and a schema error fail (exit 1), with the unknown fields still listed', async () => {
    const dir = examplesWorkspace();
    const f = path.join(dir, 'local.yml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('source: files/site.conf', 'source: files/missing.conf').replace('memory: 1024', 'memory: lots\n    colour: blue'));
    const r = await runCli(['validate', 'local.yml'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/local\.yml:\d+:19: error: file not found: files\/missing\.conf \(relative to the declaration\)/);
    expect(r.stderr).toMatch(/error: builders\[0\]\.hardwareSettings\.memory must be a whole number of at least 1/);
    expect(r.stderr).toMatch(/warning: unknown field "colour" in builders\[0\] \(ignored\)/);
    expect(r.stdout).toBe('local.yml: invalid (2 errors, 1 warning)\n');
    const missing = await runCli(['validate', 'nope.yml'], { cwd: dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('nope.yml:1:1: error: no such file or folder');
    expect((await runCli(['validate'], { cwd: dir })).code).toBe(2);
  });
});
