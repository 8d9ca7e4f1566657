// Command-line manners, through the real CLI as a child process: --help on every command, --version,
// the platform tool's short flags, one name per option (old spellings warned about), NO_COLOR and
// TERM=dumb on a real pseudo-terminal (util-linux `script`), --quiet, and a data folder that keeps
// itself out of git (checked by git itself).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/server';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, runCli, runCliOnTerminal } from './helpers/cli';

const COMMANDS = ['serve', 'users', 'validate', 'plan', 'apply', 'destroy', 'list', 'show', 'boot', 'diff'];
const root = path.resolve(__dirname, '../..');

/** The CLI on a pseudo-terminal: stdout and stderr arrive merged, as a user sees them. */
async function onTerminal(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; text: string }> {
  const r = await runCliOnTerminal(args, { cwd, env, input: '' });
  return { code: r.code, text: r.stdout };
}

describe('command-line manners', () => {
  let svc: TestService;
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
    await createUser(svc.dataDir, { login: 'bob', password: 'bob-password-1' });
  });
  afterAll(async () => svc?.close());

  it.each(COMMANDS)('%s --help, -h and `help <command>` print the usage and exit 0', async (cmd) => {
    for (const args of [[cmd, '--help'], [cmd, '-h'], ['help', cmd], [cmd, '--no-such-flag', '--help']]) {
      const r = await runCli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^usage: appliance-forge ${cmd}`));
      expect(r.stderr).toBe('');
    }
  });

  it('an unknown option is a usage error (exit 2) that points at --help', async () => {
    const r = await runCli(['serve', '--no-such-flag']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown option --no-such-flag');
    expect(r.stderr).toContain('--help for the options');
    expect((await runCli([])).code).toBe(2);
    expect((await runCli(['--help'])).code).toBe(0);
  });

  it('--version prints the version of package.json', async () => {
    const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`appliance-forge ${version}\n`);
    }
  });

  it('the platform tool\'s short flags: -a URL -u USER -k KEY -s SECRET, and -p PASSWORD', async () => {
    const dir = examplesWorkspace();
    const keys = await runCli(['plan', 'local.yml', '-a', svc.server.url, '-u', svc.login, '-k', svc.publicKey, '-s', svc.secretKey], { cwd: dir });
    expect(keys.code, keys.stderr).toBe(0);
    expect(keys.stdout).toContain('+ appliance example-web 1.0: create');
    const pw = await runCli(['plan', 'local.yml', '-a', svc.server.url, '-u', 'bob', '-p', 'bob-password-1'], { cwd: dir });
    expect(pw.code, pw.stderr).toBe(0);
    expect(pw.stdout + pw.stderr).not.toContain('bob-password-1');
    const wrong = await runCli(['plan', 'local.yml', '-a', svc.server.url, '-u', 'bob', '-p', 'not-bobs-password'], { cwd: dir });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused the credentials (401)');
  });

  it('-c reads the platform tool\'s credentials file (YAML or JSON); flags win over it, it wins over the variables', async () => {
    const dir = examplesWorkspace();
    writeFileSync(path.join(dir, 'credentials.yml'), `url: ${svc.server.url}\nuser: ${svc.login}\npublickey: ${svc.publicKey}\nsecretkey: ${svc.secretKey}\nacceptAutoSigned: true\n`, { mode: 0o600 });
    // The variables point at nothing and carry a wrong password: the file's values are used, whole.
    const env = { APPLIANCE_FORGE_URL: 'http://127.0.0.1:9/api', APPLIANCE_FORGE_PASSWORD: 'not-this-one' };
    const yml = await runCli(['plan', 'local.yml', '-c', 'credentials.yml'], { cwd: dir, env });
    expect(yml.code, yml.stderr).toBe(0);
    expect(yml.stdout).toContain('+ appliance example-web 1.0: create');
    expect(yml.stderr).not.toContain('warning');
    writeFileSync(path.join(dir, 'credentials.json'), JSON.stringify({ url: 'http://127.0.0.1:9/api', user: 'bob', password: 'bob-password-1', colour: 'blue' }));
    chmodSync(path.join(dir, 'credentials.json'), 0o644);
    const json = await runCli(['plan', 'local.yml', '--credentials', 'credentials.json', '--url', svc.server.url], { cwd: dir });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).toContain('credentials.json: unknown key "colour" (ignored)');
    expect(json.stderr).toContain('credentials.json can be read by other users: chmod 600 it');
    for (const r of [yml, json]) expect(r.stdout + r.stderr).not.toMatch(new RegExp(`${svc.secretKey}|bob-password-1`));
    const missing = await runCli(['plan', 'local.yml', '-c', 'nope.yml'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--credentials nope.yml: no such file or folder');
  });

  it('--quiet leaves only the result on stdout; without it the progress goes to stderr', async () => {
    const dir = examplesWorkspace();
    const env = { APPLIANCE_FORGE_URL: svc.server.url, APPLIANCE_FORGE_USER: svc.login, APPLIANCE_FORGE_API_KEY: svc.publicKey, APPLIANCE_FORGE_SECRET_KEY: svc.secretKey };
    const loud = await runCli(['plan', 'local.yml'], { cwd: dir, env });
    expect(loud.stderr).toContain('== Resolve and plan');
    const quiet = await runCli(['plan', 'local.yml', '-q'], { cwd: dir, env });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toBe(loud.stdout);
  });

  it('APPLIANCE_FORGE_LOG=debug traces each request (method, path, status, ms) without apiKey, signature or secret', async () => {
    const dir = examplesWorkspace();
    const env = { APPLIANCE_FORGE_URL: svc.server.url, APPLIANCE_FORGE_USER: svc.login, APPLIANCE_FORGE_API_KEY: svc.publicKey, APPLIANCE_FORGE_SECRET_KEY: svc.secretKey };
    const r = await runCli(['plan', 'local.yml'], { cwd: dir, env: { ...env, APPLIANCE_FORGE_LOG: 'debug' } });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trim().split('\n').filter((l) => l.startsWith('debug: '));
    expect(lines.length).toBeGreaterThan(5);
    for (const l of lines) expect(l).toMatch(/^debug: (GET|POST|PUT|DELETE) \/api\/\S+ \d{3} \d+ms$/);
    expect(lines).toContainEqual(expect.stringMatching(/^debug: GET \/api\/distributions\?\S*query=\S+ 200 \d+ms$/));
    // With --json, stderr is JSON Lines: the trace comes as `log` records of level debug.
    const j = await runCli(['plan', 'local.yml', '--json'], { cwd: dir, env: { ...env, APPLIANCE_FORGE_LOG: 'debug' } });
    expect(j.code, j.stderr).toBe(0);
    JSON.parse(j.stdout);
    const records = j.stderr.trim().split('\n').map((l) => JSON.parse(l) as { type: string; level?: string; message: string });
    const debug = records.filter((x) => x.level === 'debug').map((x) => x.message);
    expect(debug.length).toBeGreaterThan(5);
    for (const m of debug) expect(m).toMatch(/^(GET|POST|PUT|DELETE) \/api\/\S+ \d{3} \d+ms$/);
    for (const hidden of ['apiKey', 'signature', svc.publicKey, svc.secretKey]) expect(r.stderr + j.stderr).not.toContain(hidden);
    const off = await runCli(['plan', 'local.yml', '--json'], { cwd: dir, env });
    expect(off.stderr).not.toContain('debug');
  });

  it('--data-dir is the one name of the data folder; --data still works, with a warning', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'af-names-'));
    const now = await runCli(['users', 'add', 'carol', '--data-dir', 'd1', '--json'], { cwd: dir });
    expect(now.code, now.stderr).toBe(0);
    expect(now.stderr).toBe('');
    const old = await runCli(['users', 'add', 'dave', '--data=d2', '--json'], { cwd: dir });
    expect(old.code, old.stderr).toBe(0);
    expect(old.stderr).toContain('--data is deprecated: use --data-dir');
    expect(existsSync(path.join(dir, 'd2', 'secret.key'))).toBe(true);
    const help = await runCli(['serve', '--help']);
    expect(help.stdout).toContain('--data-dir DIR');
  });

  it('the data folder ignores itself in git: credentials.json and secret.key are never committed', async () => {
    const dir = examplesWorkspace();
    execFileSync('git', ['init', '-q', dir]);
    const r = await runCli(['plan', 'local.yml'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(dir, '.appliance-forge', 'credentials.json'))).toBe(true);
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir, encoding: 'utf8' });
    expect(status).toContain('local.yml');
    expect(status).not.toContain('.appliance-forge');
    for (const f of ['credentials.json', 'secret.key', 'forge.db']) {
      expect(execFileSync('git', ['check-ignore', path.join('.appliance-forge', f)], { cwd: dir, encoding: 'utf8' }).trim()).toBe(`.appliance-forge/${f}`);
    }
  });

  it('on a terminal: bold phases by default, none with NO_COLOR, no escape codes at all with TERM=dumb', async () => {
    const dir = examplesWorkspace();
    const colour = await onTerminal(['plan', 'local.yml'], dir, { TERM: 'xterm' });
    expect(colour.code, colour.text).toBe(0);
    expect(colour.text).toContain('\x1b[1mResolve and plan\x1b[0m');
    const noColor = await onTerminal(['plan', 'local.yml'], dir, { TERM: 'xterm', NO_COLOR: '1' });
    expect(noColor.code, noColor.text).toBe(0);
    expect(noColor.text).toContain('Resolve and plan');
    // No escape sequence that sets a colour or weight (SGR: ESC [ digits m).
    expect(noColor.text.split('\x1b[').slice(1).filter((s) => /^[0-9;]*m/.test(s))).toEqual([]);
    const dumb = await onTerminal(['plan', 'local.yml'], dir, { TERM: 'dumb' });
    expect(dumb.code, dumb.text).toBe(0);
    expect(dumb.text).toContain('== Resolve and plan');
    expect(dumb.text).not.toContain('\x1b');
  });
});
