// End to end, as a user runs it: `apply` of a declaration (Debian 12 Minimal + nginx + curl, a software
// bundle with rights and owners, an installation section with users, groups, keys, time zone, swap and a welcome
// message) against the reference server over 127.0.0.1, `--output` downloads the images, then they boot under
// QEMU TCG: the qcow2 through the library (log in as root with the declared password, check over the serial
// console), the raw through the `boot` command, and the VHD converted by qemu-img is read back and boots too.
// Costs: one OS layer (shared cache), three builds, three boots — several minutes.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootCheck } from '../../src/imaging/boot';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, runCli } from '../cli/helpers/cli';

const ROOT_PASSWORD = 'e2e-Root-pw-9';
const ALICE_PASSWORD = 'e2e-Alice-pw-9';

describe.runIf(process.getuid?.() === 0)('real image: declaration → bootable images', () => {
  let svc: TestService;
  let dir: string;
  let files: Array<{ path: string; builder?: string; format?: string }>;
  let sshKey: string;
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
    dir = examplesWorkspace('af-real-');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'e2e@forge', '-f', path.join(dir, 'key')]);
    sshKey = readFileSync(path.join(dir, 'key.pub'), 'utf8').trim();
    writeFileSync(path.join(dir, 'tool.sh'), '#!/bin/sh\necho tool-ok\n');
    const decl = readFileSync(path.join(dir, 'local.yml'), 'utf8')
      .replace(/  installation:[\s\S]*?  bundles:/, [
        '  installation:',
        '    diskSize: 2048',
        '    swapSize: 128',
        '    timezone: Europe/Paris',
        '    welcomeMessage: Welcome to the e2e appliance',
        '    rootUser:',
        '      password: ${env:E2E_ROOT_PASSWORD}',
        '      sshKeys:',
        `        - { name: e2e, publicKey: "${sshKey}" }`,
        '    groups:',
        '      - { name: app, groupId: 1500 }',
        '      - { name: web }',
        '    users:',
        '      - { name: alice, userId: 2001, fullName: Alice Example, primaryGroup: app, secondaryGroups: [web], shell: /bin/bash, password: "${env:E2E_ALICE_PASSWORD}" }',
        '  bundles:',
      ].join('\n'))
      .replace('          ownerGroup: root:root', [
        '          ownerGroup: root:root',
        '        - name: tool.sh',
        '          source: tool.sh',
        '          destination: /opt/app/bin/',
        "          rights: '0750'",
        '          ownerGroup: alice:app',
      ].join('\n'))
      .replace('builders:\n', 'builders:\n  - type: Raw Virtual Disk\n  - type: VHD\n');
    writeFileSync(path.join(dir, 'local.yml'), decl);
    const env = {
      APPLIANCE_FORGE_URL: svc.server.url, APPLIANCE_FORGE_USER: svc.login, APPLIANCE_FORGE_API_KEY: svc.publicKey,
      APPLIANCE_FORGE_SECRET_KEY: svc.secretKey, E2E_ROOT_PASSWORD: ROOT_PASSWORD, E2E_ALICE_PASSWORD: ALICE_PASSWORD,
    };
    const r = await runCli(['apply', 'local.yml', '--output', 'out', '--json'], { cwd: dir, env, killAfterMs: 1_500_000 });
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(ROOT_PASSWORD);
    files = (JSON.parse(r.stdout) as { files: typeof files }).files;
    expect(files).toHaveLength(3);
  }, 1_600_000);
  afterAll(async () => svc?.close());

  const fileOf = (ext: string): string => {
    const f = files.find((x) => x.path.endsWith(ext));
    expect(f, JSON.stringify(files)).toBeDefined();
    return f!.path;
  };

  it('the qcow2 boots; root logs in with the declared password; packages, files, accounts and settings are in place', async () => {
    const image = fileOf('.qcow2');
    expect(JSON.parse(execFileSync('qemu-img', ['info', '--output=json', image], { encoding: 'utf8' })) as { format: string; 'virtual-size': number })
      .toMatchObject({ format: 'qcow2', 'virtual-size': 2048 * 1024 * 1024 });
    const commands = [
      'systemctl is-active nginx',
      'curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1/',
      'stat -c "%a %U %G" /opt/app/bin/tool.sh /var/www/example/index.html',
      '/opt/app/bin/tool.sh',
      'id alice',
      'getent group app',
      'cat /root/.ssh/authorized_keys',
      'hostname',
      'readlink /etc/localtime',
      'swapon --show=NAME --noheadings',
      'cat /etc/motd',
      "dpkg-query -W -f '${Version}' nginx",
      'tr -d " \\n" < /etc/appliance-forge/manifest.json | grep -c "\\"name\\":\\"nginx\\",\\"installed\\":\\"[0-9]"',
      'grep -c forge /etc/shadow; grep "^root:" /etc/shadow | cut -d: -f2 | cut -c1-3',
    ];
    const r = await bootCheck({ image, login: { user: 'root', password: ROOT_PASSWORD }, commands, timeoutMs: 600_000 });
    expect(r.reason, r.consoleTail).toBeUndefined();
    const out = Object.fromEntries(r.results!.map((x) => [x.command, x]));
    const ok = (c: string): string => {
      expect(out[c]!.exitCode, `${c}: ${out[c]!.output}`).toBe(0);
      return out[c]!.output;
    };
    expect(ok(commands[0]!)).toBe('active');
    expect(ok(commands[1]!)).toBe('200');
    expect(ok(commands[2]!).split('\n')).toEqual(['750 alice app', '644 root root']);
    expect(ok(commands[3]!)).toBe('tool-ok');
    expect(ok(commands[4]!)).toMatch(/^uid=2001\(alice\) gid=1500\(app\) groups=1500\(app\),\d+\(web\)/); // the declared userId
    expect(ok(commands[5]!)).toBe('app:x:1500:');
    expect(ok(commands[6]!)).toContain(sshKey);
    expect(ok(commands[7]!)).toBe('example-web');
    expect(ok(commands[8]!)).toMatch(/zoneinfo\/Europe\/Paris$/);
    expect(ok(commands[9]!)).toContain('/swapfile');
    expect(ok(commands[10]!)).toContain('Welcome to the e2e appliance');
    // The manifest records the version dpkg installed.
    const version = ok(commands[11]!);
    expect(version).toMatch(/^\d/);
    expect(Number(ok(commands[12]!))).toBe(1);
    // No password in clear anywhere in /etc/shadow; root's is a sha512-crypt hash.
    expect(out[commands[13]!]!.output.split('\n')).toEqual(['0', '$6$']);
  }, 900_000);

  it('the raw boots through `appliance-forge boot`, alice logs in; the VHD is a vpc disk that boots to a login prompt', async () => {
    const raw = fileOf('.raw');
    const r = await runCli(['boot', raw, '--login', 'alice', '--run', 'id -gn', '--json', '--timeout', '600'], {
      env: { APPLIANCE_FORGE_BOOT_PASSWORD: ALICE_PASSWORD, PATH: process.env.PATH ?? '' }, killAfterMs: 700_000,
    });
    expect(r.code, r.stderr + r.stdout.slice(-2000)).toBe(0);
    const doc = JSON.parse(r.stdout) as { ok: boolean; results: Array<{ exitCode: number; output: string }> };
    expect(doc.ok).toBe(true);
    expect(doc.results[0]).toMatchObject({ exitCode: 0, output: 'app' });
    expect(r.stdout + r.stderr).not.toContain(ALICE_PASSWORD);

    const vhd = fileOf('.vhd');
    expect((JSON.parse(execFileSync('qemu-img', ['info', '--output=json', vhd], { encoding: 'utf8' })) as { format: string }).format).toBe('vpc');
    const v = await bootCheck({ image: vhd, timeoutMs: 600_000 });
    expect(v.reachedLogin, v.consoleTail).toBe(true);
  }, 1_500_000);
});
