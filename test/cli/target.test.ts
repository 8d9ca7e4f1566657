// Which service a run goes to, through the real CLI: a user, credential or credentials file without a
// URL is a usage error naming what was given (never a silent local run), the embedded server runs when
// nothing is configured or with `--url embedded`, and every JSON document names its `target`.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, runCli } from './helpers/cli';

describe('the target of plan and apply', () => {
  let svc: TestService;
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
  });
  afterAll(async () => svc?.close());

  it('a user or credential without a URL is a usage error naming where each came from; nothing starts', async () => {
    const dir = examplesWorkspace();
    const env = { APPLIANCE_FORGE_USER: 'alice', APPLIANCE_FORGE_PASSWORD: 'alice-password-1' };
    for (const mode of ['plan', 'apply']) {
      const r = await runCli([mode, 'local.yml', '--json'], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`appliance-forge ${mode}: no service URL: APPLIANCE_FORGE_USER and APPLIANCE_FORGE_PASSWORD are given, but no URL; give --url URL (or APPLIANCE_FORGE_URL), or --url embedded for the embedded server\n`);
    }
    const flags = await runCli(['plan', 'local.yml', '--user', 'bob', '--api-key', 'k', '--secret-key', 'not-printed-secret'], { cwd: dir });
    expect(flags.code).toBe(2);
    expect(flags.stderr).toContain('no service URL: --user, --api-key and --secret-key are given, but no URL');
    expect(flags.stderr).not.toContain('not-printed-secret');
    // A credentials file without `url` asks for a service too (the variables' password is not its).
    writeFileSync(path.join(dir, 'credentials.yml'), 'user: bob\npassword: bob-password-1\n', { mode: 0o600 });
    const file = await runCli(['plan', 'local.yml', '-c', 'credentials.yml', '--detailed-exitcode'], { cwd: dir, env: { APPLIANCE_FORGE_PASSWORD: 'x-password' } });
    expect(file.code).toBe(1);
    expect(file.stderr).toContain('no service URL: --credentials credentials.yml is given, but no URL');
    expect(existsSync(path.join(dir, '.appliance-forge'))).toBe(false);
  });

  it('the embedded server: with nothing configured, or asked for by --url embedded (credentials then unused)', async () => {
    const dir = examplesWorkspace();
    const none = await runCli(['plan', 'local.yml', '--json'], { cwd: dir });
    expect(none.code, none.stderr).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({ ok: true, mode: 'plan', target: 'embedded' });
    const named = await runCli(['plan', 'local.yml', '--url', 'embedded'], { cwd: dir, env: { APPLIANCE_FORGE_USER: 'alice' } });
    expect(named.code, named.stderr).toBe(0);
    expect(named.stderr).toContain('url embedded: using the embedded server');
    expect(named.stdout).toContain('+ appliance example-web 1.0: create');
  });

  it('plan, apply and validate JSON documents name their target: the URL without credentials, embedded, or null offline', async () => {
    const dir = examplesWorkspace();
    const env = { APPLIANCE_FORGE_URL: svc.server.url, APPLIANCE_FORGE_USER: svc.login, APPLIANCE_FORGE_API_KEY: svc.publicKey, APPLIANCE_FORGE_SECRET_KEY: svc.secretKey };
    const plan = await runCli(['plan', 'local.yml', '--json'], { cwd: dir, env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ ok: true, mode: 'plan', target: svc.server.url });
    // A failed run says where it failed; a URL's user and password never show.
    const u = new URL(svc.server.url);
    const withUser = `${u.protocol}//carol:url-password-1@${u.host}${u.pathname}`;
    const refused = await runCli(['apply', 'local.yml', '--json', '--url', withUser], { cwd: dir, env });
    expect(refused.code, refused.stderr).toBe(2); // a URL that carries credentials is a usage error
    expect(refused.stdout).toContain('must not carry a query, fragment or credentials');
    const doc = JSON.parse(refused.stdout) as { ok: boolean; target: string };
    expect(doc).toMatchObject({ ok: false, mode: 'apply', target: svc.server.url });
    expect(refused.stdout).not.toContain('url-password-1');
    const validate = await runCli(['validate', 'local.yml', '--json'], { cwd: dir });
    expect(JSON.parse(validate.stdout)).toMatchObject({ ok: true, target: null });
  });
});
