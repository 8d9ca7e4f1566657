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

  it('a typo is a warning with a suggestion, an error with --strict; platform keys are named; exit 0/2', async () => {
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
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('local.yml:6:3: error: unknown field "versoin" in stack; did you mean "version"?');
    expect(strict.stdout).toBe('local.yml: invalid (2 errors, 0 warnings)\n');
    const json = await runCli(['validate', 'local.yml', '--strict', '--json'], { cwd: dir });
    expect(json.code).toBe(2);
    const doc = JSON.parse(json.stdout) as { ok: boolean; errors: number; problems: Array<{ line: number; severity: string; message: string }> };
    expect(doc).toMatchObject({ ok: false, errors: 2 });
    expect(doc.problems[0]).toMatchObject({ line: 6, severity: 'error' });
  });

  it('a missing bundle file and a schema error fail (exit 2), with the unknown fields still listed', async () => {
    const dir = examplesWorkspace();
    const f = path.join(dir, 'local.yml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('source: files/site.conf', 'source: files/missing.conf').replace('memory: 1024', 'memory: lots\n    colour: blue'));
    const r = await runCli(['validate', 'local.yml'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/local\.yml:\d+:19: error: file not found: files\/missing\.conf \(relative to the declaration\)/);
    expect(r.stderr).toMatch(/error: builders\[0\]\.hardwareSettings\.memory must be a whole number of at least 1/);
    expect(r.stderr).toMatch(/warning: unknown field "colour" in builders\[0\] \(ignored\)/);
    expect(r.stdout).toBe('local.yml: invalid (2 errors, 1 warning)\n');
    const missing = await runCli(['validate', 'nope.yml'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.yml:1:1: error: no such file or folder');
    expect((await runCli(['validate'], { cwd: dir })).code).toBe(2);
  });

  it('checks the closed lists the service checks, offline: formats (case too), distribution, keyboard, time zone, accounts, key types', async () => {
    const dir = examplesWorkspace();
    writeFileSync(path.join(dir, 'vocab.yml'), [
      'stack:', //                                                                          1
      '  name: v', //                                                                       2
      "  version: '1'", //                                                                  3
      "  os: {name: debian, version: '12', arch: amd64}", //                                4
      '  installation:', //                                                                 5
      '    timezone: Mars/Olympus', //                                                      6
      '    keyboard: klingon', //                                                           7
      '    users:', //                                                                      8
      '      - {name: daemon}', //                                                          9
      '      - {name: ann, primaryGroup: wheel, secondaryGroups: [web], sshKeys: [{publicKey: ssh-dss AAAAB3 ann}]}', // 10
      '    groups:', //                                                                     11
      '      - {name: web}', //                                                             12
      '      - {name: sudo}', //                                                            13
      'builders:', //                                                                       14
      '  - type: qcow2', //                                                                 15
      '  - type: QCOW3', //                                                                 16
      '  - type: OpenStack QCOW2', //                                                       17
    ].join('\n'));
    const r = await runCli(['validate', 'vocab.yml'], { cwd: dir });
    expect(r.code).toBe(2);
    const formats = 'OpenStack QCOW2, OpenStack VMDK, OpenStack VHD, OpenStack VDI, QCOW2, Raw Virtual Disk, VMware, VirtualBox, VHD';
    expect(r.stderr.trim().split('\n')).toEqual([
      'vocab.yml:4:14: error: stack.os.name "debian" is not one of the 10 distribution names the service knows (CentOS, Debian, Fedora Core, OpenSUSE, Oracle Linux, RedHat Enterprise Linux, Scientific Linux, SUSE Linux Enterprise Server, Ubuntu, Windows); did you mean "Debian"?',
      'vocab.yml:4:43: error: stack.os.arch "amd64" is not one of the 5 architectures the service knows (i386, i586, i686, noarch, x86_64)',
      'vocab.yml:6:15: error: stack.installation.timezone "Mars/Olympus" is not an IANA time zone name (e.g. Europe/Paris, Etc/UTC)',
      expect.stringMatching(/^vocab\.yml:7:15: error: stack\.installation\.keyboard "klingon" is not one of the \d+ keyboards the service knows$/),
      'vocab.yml:9:16: error: stack.installation.users[].name "daemon" is an account the image already has',
      'vocab.yml:10:35: error: stack.installation.users[].primaryGroup "wheel" is neither a declared group nor a standard Debian group',
      expect.stringMatching(/^vocab\.yml:10:\d+: error: stack\.installation\.users\[\]\.sshKeys\[\]\.publicKey must be one OpenSSH public key line \(ssh-ed25519, /),
      'vocab.yml:13:16: error: stack.installation.groups[].name "sudo" is a group the image already has',
      `vocab.yml:15:11: error: unknown image format "qcow2" (the reference server offers: ${formats}); did you mean "QCOW2"?`,
      `vocab.yml:16:11: error: unknown image format "QCOW3" (the reference server offers: ${formats}); did you mean "QCOW2"?`,
    ]);
    // The keyboard is compared as the service's codec compares it: without case.
    writeFileSync(path.join(dir, 'ok.yml'), readFileSync(path.join(dir, 'local.yml'), 'utf8').replace('timezone: Etc/UTC', 'timezone: Europe/Paris\n    keyboard: DE-latin1'));
    const ok = await runCli(['validate', 'ok.yml'], { cwd: dir });
    expect(ok.code, ok.stderr).toBe(0);
  });
});
