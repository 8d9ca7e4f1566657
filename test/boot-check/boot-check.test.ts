// The boot check against real QEMU (TCG): a Debian 12 image that boots (fixture.ts), disks that
// do not, and the command line built from the sources. Every QEMU run is looked up in /proc by the
// path of its image, so "nothing left running" is checked independently of the code under test.
// Cost: three full boots of the fixture (each about 1 min on an idle 2-core machine, up to 3 min under
// load) plus a few seconds of QEMU on blank disks; building the fixture once is about 20 s (cached).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootCheck, FAST_KERNEL_PARAMS, FAST_NETWORK_PARAMS, isBootCheckError } from '../../src/imaging/boot';
import { OVMF_CODE, OVMF_SECURE_CODE, OVMF_VARS } from '../../src/imaging/boot/firmware';
import { qemuArgs } from '../../src/imaging/boot/qemu';
import { AbortedError, isForgeError } from '../../src/errors';
import { MASK } from '../../src/model/redact';
import { cliBundle, runCli } from '../cli/helpers/cli';
import { bootFixture, type BootFixture } from './fixture';
import { alive, qemuPidsFor } from './processes';
import { loopingDisk, patch, qemuImg } from './vectors';

const BOOT_TEST_MS = 400_000;
const work = mkdtempSync(path.join(tmpdir(), 'af-boot-check-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A blank disk of 8 MiB made by qemu-img (nothing on it boots). */
const blank = (name: string, format: string): string => qemuImg(work, name, format);

const sha256 = (file: string): string => execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0]!;

describe('bootCheck: what does not boot, and bad input (seconds)', () => {
  it('a raw disk whose boot sector loops: reachedLogin false after the timeout, and its QEMU is gone', async () => {
    const image = loopingDisk(work, 'loop.raw');
    const r = await bootCheck({ image, timeoutMs: 6_000 });
    expect(r).toMatchObject({ reachedLogin: false, format: 'raw' });
    expect(r.reason).toMatch(/timed out after 6 s waiting for the login prompt/);
    expect(r.loggedIn).toBeUndefined();
    expect(alive(r.qemuPid)).toBe(false);
    expect(qemuPidsFor(image)).toEqual([]);
  });

  it('abort: the call rejects with AbortedError and QEMU is killed', async () => {
    const image = blank('blank.vhd', 'vpc');
    const ac = new AbortController();
    const running = bootCheck({ image, timeoutMs: 120_000, signal: ac.signal });
    let seen: number[] = [];
    for (let i = 0; i < 200 && seen.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = qemuPidsFor(image);
    }
    expect(seen).toHaveLength(1);
    ac.abort();
    const e = await running.catch((x: unknown) => x);
    expect(isForgeError(e, AbortedError)).toBe(true);
    expect(alive(seen[0]!)).toBe(false);
    expect(qemuPidsFor(image)).toEqual([]);
  });

  it('QEMU refusing the image (a qcow2 whose cluster size printf | dd set to 2^8) is an input error in its words: qemu-img reads the image before QEMU starts', async () => {
    const image = blank('small-clusters.qcow2', 'qcow2');
    patch(image, 20, [0, 0, 0, 8]);
    const e = await bootCheck({ image, timeoutMs: 60_000 }).catch((x: unknown) => x);
    expect(isBootCheckError(e, 'input')).toBe(true);
    expect((e as Error).message).toBe(`${image} cannot be opened by QEMU as a qcow2 image confined to this one file: Could not open '${image}': Unsupported cluster size: 2^8`);
    expect(qemuPidsFor(image)).toEqual([]);
  });

  it('refuses a compressed image, a missing file and commands without a login, starting nothing', async () => {
    const gz = path.join(work, 'disk.qcow2.gz');
    writeFileSync(gz, gzipSync(readFileSync(blank('g.qcow2', 'qcow2'))));
    const e1 = await bootCheck({ image: gz }).catch((x: unknown) => x);
    expect(isBootCheckError(e1, 'input')).toBe(true);
    expect((e1 as Error).message).toContain(`gunzip -k ${gz}`);
    const e2 = await bootCheck({ image: path.join(work, 'nope.qcow2') }).catch((x: unknown) => x);
    expect(isBootCheckError(e2, 'input')).toBe(true);
    expect((e2 as Error).message).toMatch(/cannot read the image .*ENOENT/);
    const e3 = await bootCheck({ image: gz, commands: ['id'] }).catch((x: unknown) => x);
    expect((e3 as Error).message).toContain('commands need a login');
    // A password too short for the one masker (src/model/redact.ts) would show in the console: refused.
    const e4 = await bootCheck({ image: gz, login: { user: 'root', password: 'ab' } }).catch((x: unknown) => x);
    expect(isBootCheckError(e4, 'input')).toBe(true);
    expect((e4 as Error).message).toContain('at least 3 characters');
    expect(qemuPidsFor(gz)).toEqual([]);
  });

  it('names the Debian packages when qemu-system-x86_64 and qemu-img are missing (qemu-img reads every image first: image.ts)', async () => {
    const image = loopingDisk(work, 'tools.raw');
    const saved = process.env.PATH;
    try {
      process.env.PATH = path.join(work, 'empty');
      const e1 = await bootCheck({ image }).catch((x: unknown) => x);
      expect(isBootCheckError(e1, 'missing-tool')).toBe(true);
      expect(e1).toMatchObject({ packages: ['qemu-system-x86', 'qemu-utils'] });
      expect((e1 as Error).message).toContain('apt-get install qemu-system-x86 qemu-utils');
    } finally {
      process.env.PATH = saved;
    }
  });
});

/** The value of each `-drive if=pflash,…` of a running QEMU, from /proc. */
function pflashDrives(pid: number): string[] {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return argv.filter((a, i) => argv[i - 1] === '-drive' && a.startsWith('if=pflash'));
}

async function firstQemuFor(image: string): Promise<number> {
  for (let i = 0; i < 400; i++) {
    const [pid] = qemuPidsFor(image);
    if (pid !== undefined) return pid;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no QEMU started for ${image}`);
}

describe('firmware: SeaBIOS by default, OVMF with a private variable store (seconds)', () => {
  it('QEMU options: none for bios; q35 and two pflash drives for uefi, the code read only', () => {
    const base = { image: '/x.raw', format: 'raw', memoryMiB: 128, network: 'none' } as const;
    const bios = qemuArgs(base);
    expect(bios).not.toContain('-machine');
    expect(bios.some((a) => a.includes('pflash'))).toBe(false);
    const uefi = qemuArgs({ ...base, firmware: { kind: 'uefi', code: OVMF_CODE, vars: '/tmp/a,b/VARS.fd' } });
    expect(uefi.slice(uefi.indexOf('-machine'), uefi.indexOf('-machine') + 2)).toEqual(['-machine', 'q35']);
    expect(uefi.filter((a) => a.startsWith('if=pflash'))).toEqual([
      `if=pflash,format=raw,unit=0,readonly=on,file=${OVMF_CODE}`,
      'if=pflash,format=raw,unit=1,file=/tmp/a,,b/VARS.fd', // a comma in a path doubled, as QEMU's option syntax wants
    ]);
    expect(uefi).not.toContain('-global');
    // Secure Boot's OVMF needs SMM and a secure flash.
    const secure = qemuArgs({ ...base, firmware: { kind: 'uefi', code: OVMF_SECURE_CODE, vars: '/tmp/v.fd', secure: true } });
    expect(secure.slice(secure.indexOf('-machine'), secure.indexOf('-machine') + 4)).toEqual(['-machine', 'q35,smm=on', '-global', 'driver=cfi.pflash01,property=secure,value=on']);
    expect(secure).toContain(`if=pflash,format=raw,unit=0,readonly=on,file=${OVMF_SECURE_CODE}`);
  });

  it.each(['timeout', 'abort'] as const)('uefi (%s): QEMU runs OVMF on a copy of its variable store, removed when the check ends', async (end) => {
    const image = loopingDisk(work, `uefi-${end}.raw`);
    const template = sha256(OVMF_VARS);
    const ac = new AbortController();
    const running = bootCheck({ image, firmware: 'uefi', timeoutMs: end === 'timeout' ? 8_000 : 120_000, signal: ac.signal });
    const pid = await firstQemuFor(image);
    const drives = pflashDrives(pid);
    expect(drives[0]).toBe(`if=pflash,format=raw,unit=0,readonly=on,file=${OVMF_CODE}`);
    const vars = /^if=pflash,format=raw,unit=1,file=(.+)$/.exec(drives[1] ?? '')?.[1];
    expect(vars).toBeDefined();
    expect(path.dirname(vars!)).not.toBe(path.dirname(OVMF_VARS));
    expect(statSync(vars!).size).toBe(statSync(OVMF_VARS).size);
    if (end === 'abort') ac.abort();
    const r = await running.catch((x: unknown) => x);
    if (end === 'timeout') expect(r).toMatchObject({ firmware: 'uefi', reachedLogin: false, reason: expect.stringMatching(/timed out/) });
    else expect(isForgeError(r, AbortedError)).toBe(true);
    expect(existsSync(path.dirname(vars!))).toBe(false);
    expect(alive(pid)).toBe(false);
    expect(sha256(OVMF_VARS)).toBe(template);
  });
});

describe('bootCheck of a Debian 12 image (the fixture)', () => {
  let fx: BootFixture;
  beforeAll(async () => {
    fx = await bootFixture();
    cliBundle();
  }, 900_000);

  it('reaches login, logs in as root, runs commands with their exit codes and output (network user: DHCP lease); the image is unchanged', async () => {
    const before = sha256(fx.qcow2);
    const lines: string[] = [];
    // The password split in two in the command, so only its output can carry it whole: it must come back masked.
    const [head, tail] = [fx.password.slice(0, 5), fx.password.slice(5)];
    const r = await bootCheck({
      image: fx.qcow2,
      login: { user: fx.user, password: fx.password },
      commands: [
        'systemctl is-active nginx',
        'id -u',
        `echo "it's $((40 + 2))"; ls /nonexistent; exit 3`,
        `printf '%s%s\\n' '${head}' '${tail}'`,
        // network 'user': QEMU's user-mode DHCP server hands out 10.0.2.15 (QEMU's documented default).
        `nic=$(ls /sys/class/net | grep -v '^lo$'); dhclient -1 "$nic" >/dev/null 2>&1; ip -4 -o addr show dev "$nic" | grep -o 'inet [0-9./]*'`,
      ],
      network: 'user',
      onLine: (l) => lines.push(l),
    });
    expect(r.reason).toBeUndefined();
    expect(r).toMatchObject({ format: 'qcow2', reachedLogin: true, loggedIn: true });
    expect(r.results).toEqual([
      { command: 'systemctl is-active nginx', exitCode: 0, output: 'active' },
      { command: 'id -u', exitCode: 0, output: '0' },
      { command: expect.stringContaining('exit 3'), exitCode: 3, output: "it's 42\nls: cannot access '/nonexistent': No such file or directory" },
      { command: expect.stringContaining('printf'), exitCode: 0, output: MASK },
      { command: expect.stringContaining('dhclient'), exitCode: 0, output: 'inet 10.0.2.15/24' },
    ]);
    expect(lines.some((l) => /login: /.test(l))).toBe(true);
    for (const text of [r.consoleTail, ...lines]) expect(text).not.toContain(fx.password);
    expect(alive(r.qemuPid)).toBe(false);
    expect(qemuPidsFor(fx.qcow2)).toEqual([]);
    expect(sha256(fx.qcow2)).toBe(before);
  }, BOOT_TEST_MS);

  it('CLI: 0 when the login and every --run pass (human output); direct kernel + HTTP probe: nginx answers 200, 1 on a wrong password (--json); the password never shown', async () => {
    const env = { MY_PW: fx.password };
    const ok = await runCli(['boot', fx.qcow2, '--login', 'root', '--password-env', 'MY_PW', '--run', 'systemctl is-active nginx', '--run', 'id -u', '--run', 'ls /sys/class/net'],
      { env, killAfterMs: BOOT_TEST_MS - 20_000 });
    expect(ok.code, ok.stderr + ok.stdout).toBe(0);
    expect(ok.stdout).toContain(`image   ${fx.qcow2} (qcow2, bios)`);
    expect(ok.stdout).toContain('boot    reached the login prompt');
    expect(ok.stdout).toContain('login   logged in as root');
    expect(ok.stdout).toMatch(/run {5}exit 0 {2}systemctl is-active nginx\n {8}\| active\n/);
    expect(ok.stdout).toMatch(/run {5}exit 0 {2}id -u\n {8}\| 0\n/);
    expect(ok.stdout).toMatch(/run {5}exit 0 {2}ls \/sys\/class\/net\n {8}\| lo\n(?! {8}\|)/); // no NIC by default
    expect(ok.stdout).toMatch(/result {2}ok in \d+\.\d s/);

    // The fast path: the image's kernel started by QEMU, nginx probed through a forwarded loopback port.
    const bad = await runCli(['boot', fx.qcow2, '--direct-kernel', '--http', '80/', '--login', 'root', '--json', '--console'],
      { env: { APPLIANCE_FORGE_BOOT_PASSWORD: `${fx.password}-wrong` }, killAfterMs: BOOT_TEST_MS - 20_000 });
    expect(bad.code, bad.stderr).toBe(1);
    const doc = JSON.parse(bad.stdout) as { ok: boolean; reachedLogin: boolean; loggedIn: boolean; reason: string; qemuPid: number; path: string; commandLine: string; http: { status: number; readyMs: number } };
    expect(doc).toMatchObject({ ok: false, reachedLogin: true, loggedIn: false, path: 'direct-kernel', http: { status: 200 } });
    expect(doc.http.readyMs).toBeGreaterThan(0);
    // GRUB puts BOOT_IMAGE= first on the command line it passes; QEMU's -append has only the image's own words.
    // The kernel's notice (its info-level `Command line:` is off the console under the fast path's loglevel=6).
    expect(bad.stderr).toMatch(/console \| .*Kernel command line: root=LABEL=root /);
    expect(bad.stderr).not.toContain('BOOT_IMAGE=');
    // The fast-path words come after the image's own, in the result (what QEMU was given); with the probe's
    // NIC, the static ip= word last (Debian 12's initramfs does not act on it: test/e2e/real-image.test.ts,
    // Debian 13). Not matched word for word on the console: the kernel's UART console drops a character
    // now and then when the host is loaded (a suite run printed `getty-satic.service` on that line).
    expect(doc.commandLine).toMatch(new RegExp(`^root=LABEL=root .* ${[...FAST_KERNEL_PARAMS, ...FAST_NETWORK_PARAMS].join(' ')}$`));
    expect(doc.reason).toContain('Login incorrect');
    expect(bad.stderr).toMatch(/console \| .*login: /);
    for (const out of [ok.stdout, ok.stderr, bad.stdout, bad.stderr]) expect(out).not.toContain(fx.password);
    expect(qemuPidsFor(fx.qcow2)).toEqual([]);
  }, 2 * BOOT_TEST_MS);
});

describe('appliance-forge boot: usage and failures without a guest', () => {
  it('exit 2 on usage errors, 1 when no login prompt shows, 130 on SIGINT (QEMU killed), 1 with the packages when QEMU is missing', async () => {
    const image = loopingDisk(work, 'cli.raw');
    const gz = path.join(work, 'cli.raw.gz');
    writeFileSync(gz, gzipSync(Buffer.alloc(1024)));
    const help = await runCli(['boot', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--password-env VAR');
    for (const [args, message] of [
      [['boot'], 'one IMAGE expected'],
      [['boot', image, '--run', 'id'], '--run needs --login'],
      [['boot', image, '--login', 'root'], 'APPLIANCE_FORGE_BOOT_PASSWORD'],
      [['boot', image, '--format', 'iso'], '--format must be one of qcow2, raw, vmdk, vhd, vdi'],
      [['boot', image, '--firmware', 'efi'], '--firmware must be one of bios, uefi, uefi-secure'],
      [['boot', image, '--timeout', 'soon'], '--timeout must be'],
      [['boot', image, '--no-fast-params'], '--no-fast-params needs --direct-kernel'],
      [['boot', image, '--password', 'x'], 'appliance-forge boot: unknown option --password'],
      [['boot', gz], 'gunzip -k'],
    ] as const) {
      const r = await runCli([...args]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(message);
    }
    const none = await runCli(['boot', image, '--timeout', '5', '--json']);
    expect(none.code, none.stderr).toBe(1);
    expect(JSON.parse(none.stdout)).toMatchObject({ ok: false, format: 'raw', reachedLogin: false });
    expect(qemuPidsFor(image)).toEqual([]);
    // SIGINT once QEMU runs: exit 130 and QEMU killed.
    const interrupted = runCli(['boot', image, '--timeout', '120']);
    let seen: number[] = [];
    for (let i = 0; i < 400 && seen.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = qemuPidsFor(image);
    }
    expect(seen).toHaveLength(1);
    const cli = Number(readFileSync(`/proc/${seen[0]}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    process.kill(cli, 'SIGINT');
    const int = await interrupted;
    expect(int.code, int.stderr).toBe(130);
    expect(alive(seen[0]!)).toBe(false);
    expect(qemuPidsFor(image)).toEqual([]);
    const noQemu = await runCli(['boot', image], { env: { PATH: path.join(work, 'empty') } });
    expect(noQemu.code).toBe(1);
    expect(noQemu.stderr).toContain('apt-get install qemu-system-x86');
  });
});
