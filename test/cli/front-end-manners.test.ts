// The command line's manners, through the real CLI as a child process against the
// reference server on 127.0.0.1: one exit code for an invalid declaration whichever command reads it,
// a base-URL hint on a 404 at the service's root, a 401 that names the URL, the user and where the
// credentials came from, "did you mean" for commands and flags (boot's and diff's too), and help
// footers that name only what the command takes.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, connectionEnv, runCli } from './helpers/cli';

describe('the command line fails alike and cleanly', () => {
  let svc: TestService;
  let creds: Record<string, string>;
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
    creds = connectionEnv(svc.server.url, svc);
  });
  afterAll(async () => svc?.close());

  it('an invalid declaration exits 2 in validate (text and --json), plan and apply; the help says so', async () => {
    const dir = examplesWorkspace();
    writeFileSync(path.join(dir, 'bad.yml'), readFileSync(path.join(dir, 'local.yml'), 'utf8').replace('memory: 1024', 'memory: lots'));
    const codes = [];
    for (const args of [['validate', 'bad.yml'], ['validate', 'bad.yml', '--json'], ['validate', 'bad.yml', '--strict'], ['plan', 'bad.yml'], ['plan', 'bad.yml', '--json'], ['apply', 'bad.yml']]) {
      const r = await runCli(args, { cwd: dir, env: creds });
      expect(r.stderr + r.stdout).toMatch(/memory must be a whole number/);
      codes.push([args.join(' '), r.code]);
    }
    expect(codes).toEqual(codes.map(([a]) => [a, 2]));
    const help = await runCli(['validate', '--help']);
    expect(help.stdout).toContain('exit status: 0 valid (warnings allowed), 2 invalid file or usage');
  }, 300_000);

  it('destroy --help names only what destroy takes, and each exit code once', async () => {
    const help = (await runCli(['destroy', '--help'])).stdout;
    expect(help).not.toMatch(/-only|-except/);
    expect(help).toContain("single dash works too: -var, -var-file, -auto-approve, -json.");
    const status = help.split('\n').find((l) => l.startsWith('exit status:')) ?? '';
    expect(status).toBe('exit status: 0 ok (or nothing to remove), 2 invalid file or usage, 1 declined or any other failure, 130 interrupted');
    expect((await runCli(['plan', '--help'])).stdout).toContain('single dash works too: -var, -var-file, -only, -except, -json.');
  });

  it('a 404 at the root of a URL without /api: a hint about the base URL, in plan and list', async () => {
    const dir = examplesWorkspace();
    const root = svc.server.url.replace(/\/api\/?$/, '');
    expect(root).not.toBe(svc.server.url);
    for (const args of [['plan', 'local.yml'], ['list']]) {
      const r = await runCli(args, { cwd: dir, env: { ...creds, APPLIANCE_FORGE_URL: root } });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`is ${root} the service's base URL? The API is usually under /api (${root}/api)`);
    }
    const right = await runCli(['list'], { cwd: dir, env: creds });
    expect(right.stderr).not.toContain('base URL');
  }, 120_000);

  it('"did you mean" for a command, a top-level option and a command\'s option; no raw parseArgs text', async () => {
    const aply = await runCli(['aply', 'local.yml']);
    expect(aply.code).toBe(2);
    expect(aply.stderr.split('\n')[0]).toBe('appliance-forge: unknown command "aply"; did you mean apply?');
    const versoin = await runCli(['--versoin']);
    expect(versoin.code).toBe(2);
    expect(versoin.stderr.split('\n')[0]).toBe('appliance-forge: unknown option "--versoin"; did you mean --version?');
    const jsn = await runCli(['validate', 'local.yml', '--jsn'], { cwd: examplesWorkspace() });
    expect(jsn.code).toBe(2);
    expect(jsn.stderr).toBe('appliance-forge validate: unknown option --jsn; did you mean --json?\nusage: appliance-forge validate FILE [options] (--help for the options)\n');
    const plan = await runCli(['plan', 'local.yml', '--no-pubish'], { cwd: examplesWorkspace() });
    expect(plan.code).toBe(2);
    expect(plan.stderr).toContain('unknown option --no-pubish; did you mean --no-publish?');
    expect(plan.stderr).not.toContain('positional');
  });

  it('a 401 in plan and apply names the URL, the user and where the credentials came from, never the secret', async () => {
    const dir = examplesWorkspace();
    const wrong = 'WRONG-password-0123456789';
    const at = `the service refused the credentials (401): the service at ${svc.server.url} refused user "${svc.login}" with`;
    const flag = await runCli(['plan', 'local.yml', '--url', svc.server.url, '--user', svc.login, '--password', wrong], { cwd: dir });
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain(`${at} the password from --password;`);
    const env = await runCli(['apply', 'local.yml'], { cwd: dir, env: { APPLIANCE_FORGE_URL: svc.server.url, APPLIANCE_FORGE_USER: svc.login, APPLIANCE_FORGE_PASSWORD: wrong } });
    expect(env.code).toBe(1);
    expect(env.stderr).toContain(`${at} the password from the environment (APPLIANCE_FORGE_PASSWORD);`);
    const keys = await runCli(['plan', 'local.yml'], { cwd: dir, env: { ...creds, APPLIANCE_FORGE_SECRET_KEY: wrong } });
    expect(keys.code).toBe(1);
    expect(keys.stderr).toContain(`${at} the API key pair from the environment (APPLIANCE_FORGE_API_KEY, APPLIANCE_FORGE_SECRET_KEY);`);
    writeFileSync(path.join(dir, 'credentials.yml'), `url: ${svc.server.url}\nuser: ${svc.login}\npassword: ${wrong}\n`, { mode: 0o600 });
    const file = await runCli(['apply', 'local.yml', '-c', 'credentials.yml'], { cwd: dir });
    expect(file.code).toBe(1);
    expect(file.stderr).toContain(`${at} the password from the credentials file credentials.yml (--credentials);`);
    for (const r of [flag, env, keys, file]) expect(r.stdout + r.stderr).not.toContain(wrong);
  }, 120_000);

  it('boot and diff: one line with "did you mean" for a misspelled option, not parseArgs text', async () => {
    const boot = await runCli(['boot', 'disk.qcow2', '--direct-kernal']);
    expect([boot.code, boot.stderr]).toEqual([2, 'appliance-forge boot: unknown option --direct-kernal; did you mean --direct-kernel?\nusage: appliance-forge boot IMAGE [options] (--help for the options)\n']);
    const diff = await runCli(['diff', 'a.raw', 'b.raw', '--fils']);
    expect([diff.code, diff.stderr]).toEqual([2, 'appliance-forge diff: unknown option --fils; did you mean --files?\nusage: appliance-forge diff IMAGE_A IMAGE_B [options] (--help for the options)\n']);
    const jsn = await runCli(['diff', 'a.raw', 'b.raw', '--jsn']);
    expect(jsn.stderr.split('\n')[0]).toBe('appliance-forge diff: unknown option --jsn; did you mean --json?');
  });
});
