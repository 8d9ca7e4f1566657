// stack.installation: the platform tool's installation section read with file:line:column problems,
// applied to the real reference server on 127.0.0.1, planned field by field, passwords never shown.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDeclaration, loadDeclaration, planDeclaration, type EngineEvent } from '../../src/engine';
import { type InstallationDecl, passwordFingerprint, preparePasswordFingerprint } from '../../src/engine/installation';
import { parseDeclaration } from '../../src/engine/parse';
import { examplesWorkspace, startTestService, type TestService } from './helpers/service';

const PASSWORD = 'demo-root-pw-9341';

const decl = (installation: string) => `stack:
  name: inst-test
  version: '1.0'
  os:
    name: Debian
    version: '12'
  installation:
${installation}
builders:
  - type: QCOW2
`;

const FULL = `    timezone: Europe/Paris
    keyboard: fr
    kernelParams: console=ttyS0   quiet
    welcomeMessage: hello
    rootUser:
      password: \${env:ROOT_PW}
      sshKeys:
        - name: ops
          publicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGs0bWVrZXlrZXlrZXlrZXlrZXlrZXlrZXlrZXlrZXlr ops@example
    groups:
      - name: web
        groupId: 2001
    users:
      - name: deploy
        fullName: Deploy User
        primaryGroup: web
        secondaryGroups: [sudo, adm]
        shell: /bin/bash
`;

describe('stack.installation', () => {
  it('reads every field with the service\'s names, the password a secret', () => {
    const r = parseDeclaration(decl(FULL), { file: 'decl.yml', dir: '.', env: { ROOT_PW: PASSWORD } });
    expect(r.problems.filter((p) => p.severity === 'error')).toEqual([]);
    const i = r.declaration!.stack.installation;
    expect(i).toMatchObject({
      timezone: 'Europe/Paris', keyboard: 'fr', kernelParams: 'console=ttyS0 quiet', welcomeMessage: 'hello',
      rootUser: { password: PASSWORD, sshKeys: [{ name: 'ops' }] },
      groups: [{ name: 'web', groupId: 2001 }],
      users: [{ name: 'deploy', fullName: 'Deploy User', primaryGroup: 'web', secondaryGroups: ['sudo', 'adm'], shell: '/bin/bash' }],
    });
    expect(r.declaration!.secrets).toContain(PASSWORD);
  });

  it('a field the service cannot honour, a wrong type or a repeated user is an error at file:line:column', () => {
    const r = parseDeclaration(decl(`    users:
      - name: a
        sudo: true
      - name: a
        userId: abc
    hostname: box
`), { file: 'decl.yml', dir: '.', env: {} });
    const errors = r.problems.filter((p) => p.severity === 'error').map((p) => `${p.line}:${p.column} ${p.message}`);
    expect(errors).toEqual([
      expect.stringMatching(/^10:9 .*sudo/),
      expect.stringMatching(/^11:15 .*"a" is declared twice/),
      expect.stringMatching(/^12:17 /),
      expect.stringMatching(/^13:5 .*hostname/),
    ]);
  });
});

describe('the declared passwords\' fingerprint', () => {
  const installation = (): InstallationDecl => ({ rootUser: { password: PASSWORD }, users: [{ name: 'deploy', password: 'x' }] });
  const salt = 'inst-test\u00001.0';

  it('made in the background or in place, it is the value appliances already carry in their tag', async () => {
    // Written by earlier versions into appliance tags: a different value would show every password as changed.
    const before = '8eeb1b5dc61b4301d3704e2c7be571c8';
    expect(passwordFingerprint(installation(), salt)).toBe(before);
    const prepared = installation();
    const pending = preparePasswordFingerprint(prepared, salt);
    expect(preparePasswordFingerprint(prepared, salt)).toBe(pending);
    await pending;
    expect(passwordFingerprint(prepared, salt)).toBe(before);
    expect(passwordFingerprint(prepared, 'other\u00001.0')).not.toBe(before);
    expect(passwordFingerprint({ ...installation(), rootUser: { password: `${PASSWORD}!` } }, salt)).not.toBe(before);
    // No password declared: no fingerprint, nothing to wait for.
    await preparePasswordFingerprint({}, salt);
    expect(passwordFingerprint({}, salt)).toBeUndefined();
  });
});

describe('stack.installation against the reference server', () => {
  let svc: TestService;
  let file: string;
  const env = { ROOT_PW: PASSWORD };
  beforeAll(async () => {
    svc = await startTestService();
    file = path.join(examplesWorkspace('af-inst-'), 'inst.yml');
    writeFileSync(file, decl(FULL));
  });
  afterAll(async () => svc?.close());

  const run = (mode: 'plan' | 'apply', events: EngineEvent[] = []) => {
    const o = { client: svc.client(), pollMs: 100, onEvent: (e: EngineEvent) => events.push(e) };
    const d = loadDeclaration(file, { env }).declaration;
    return mode === 'apply' ? applyDeclaration(d, o) : planDeclaration(d, o);
  };

  it('apply writes the profile; the service keeps only a sha512-crypt hash of the password', async () => {
    const events: EngineEvent[] = [];
    const r = await run('apply', events);
    expect(r.plan.appliance.action).toBe('create');
    expect(JSON.stringify(events)).not.toContain(PASSWORD);
    const bytes = readdirSync(svc.dataDir, { recursive: true, encoding: 'utf8' })
      .map((f) => path.join(svc.dataDir, f))
      .flatMap((f) => { try { return [readFileSync(f).toString('latin1')]; } catch { return []; } })
      .join('\n');
    expect(bytes).not.toContain(PASSWORD);
    const hash = /\$6\$[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{86}/.exec(bytes)?.[0];
    expect(hash).toBeDefined();
    const salt = hash!.split('$')[2]!;
    // openssl is the independent implementation of sha512-crypt.
    expect(execFileSync('openssl', ['passwd', '-6', '-salt', salt, PASSWORD], { encoding: 'utf8' }).trim()).toBe(hash);
    const again = await run('plan');
    expect(again.plan.appliance).toMatchObject({ action: 'unchanged', changes: [] });
  });

  it('plan names each changed field and a changed password without showing it', async () => {
    const text = readFileSync(file, 'utf8').replace('Europe/Paris', 'Etc/UTC').replace('shell: /bin/bash', 'shell: /bin/sh');
    writeFileSync(file, text);
    env.ROOT_PW = 'another-secret-5512';
    const r = await run('plan');
    expect(r.plan.appliance.action).toBe('update');
    expect(r.plan.appliance.changes).toEqual(['install profile (timezone, users)', 'passwords (sensitive)']);
    expect(JSON.stringify(r.plan)).not.toContain('another-secret-5512');
    await run('apply');
    expect((await run('plan')).plan.appliance.action).toBe('unchanged');
  });
});
