// `boot --accel auto|kvm|tcg` against real QEMU: the probe (accel.ts) run with TCG as its accelerator on the
// fixture's own kernel, and the CLI's three choices. What KVM can do here is found out independently of
// the code under test (opening /dev/kvm read-write), so the tests hold on a host with a working KVM too.
// Cost: two probes of a few seconds under TCG, and two boots of the fixture on the fast path (--direct-kernel),
// each about a minute under TCG on a loaded 2-core machine; building the fixture is about 20 s (cached).
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessProblemOf, kvmAccessProblem, probeAccelerator } from '../../src/imaging/boot/accel';
import { inspectImage } from '../../src/imaging/boot/image';
import { extractBootFiles, type BootFiles } from '../../src/imaging/boot/kernel-files';
import { cliBundle, runCli } from '../cli/helpers/cli';
import { bootFixture, type BootFixture } from './fixture';
import { alive, qemuPidsFor } from './processes';
import { loopingDisk } from './vectors';

const BOOT_TEST_MS = 400_000;
const work = mkdtempSync(path.join(tmpdir(), 'af-accel-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Whether this process can open /dev/kvm read-write: the tests' own look, not accel.ts's. */
function kvmOpens(): boolean {
  try {
    closeSync(openSync('/dev/kvm', constants.O_RDWR));
    return true;
  } catch {
    return false;
  }
}

describe('the accelerator option and /dev/kvm (no guest)', () => {
  it('a bad --accel is a usage error naming the three choices; --help lists them', async () => {
    const image = loopingDisk(work, 'usage.raw');
    const r = await runCli(['boot', image, '--accel', 'hvf']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--accel must be one of auto, kvm, tcg');
    expect(qemuPidsFor(image)).toEqual([]);
    const help = await runCli(['boot', '--help']);
    expect(help.stdout).toMatch(/--accel A +auto \(default\): KVM when/);
  });

  it('kvmAccessProblem: undefined exactly when the device opens read-write; a missing device is named', () => {
    expect(kvmAccessProblem() === undefined).toBe(kvmOpens());
    expect(kvmAccessProblem(path.join(work, 'no-kvm'))).toMatch(/^no .*no-kvm \(this host has no KVM/);
    // A permission fault cannot be produced here (the tests may run as root, who opens any device): the
    // error is built by hand to check the one line the user gets.
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    expect(accessProblemOf('/dev/kvm', denied)).toBe('cannot open /dev/kvm read-write (permission denied: the user must be in group kvm)');
  });
});

describe('the probe, run with TCG on the fixture\'s kernel', () => {
  let files: BootFiles;
  beforeAll(async () => {
    const fx = await bootFixture();
    files = await extractBootFiles(await inspectImage(fx.qcow2));
  }, 900_000);
  afterAll(async () => files?.dispose());

  it('a bound the kernel can meet: it reaches its init stage and QEMU exits by itself', async () => {
    const r = await probeAccelerator({ accel: 'tcg', kernel: files.kernel, boundMs: 180_000 });
    expect(r).toMatchObject({ runs: true });
    expect(r.reason).toBeUndefined();
    expect(alive(r.qemuPid)).toBe(false);
    expect(qemuPidsFor(files.kernel)).toEqual([]);
  }, 200_000);

  it('a bound too short for the kernel: reported as not running, QEMU killed and nothing left running', async () => {
    const r = await probeAccelerator({ accel: 'tcg', kernel: files.kernel, boundMs: 500 });
    expect(r.runs).toBe(false);
    expect(r.reason).toMatch(/^TCG did not run a guest within \d+ s \(the image's kernel, started without a disk, did not reach its init stage\)$/);
    expect(alive(r.qemuPid)).toBe(false);
    expect(qemuPidsFor(files.kernel)).toEqual([]);
  }, 60_000);
});

interface Doc { ok: boolean; reachedLogin: boolean; accel: { requested: string; used: string; reason?: string } }

describe('appliance-forge boot --accel on the fixture (fast path)', () => {
  let fx: BootFixture;
  beforeAll(async () => {
    fx = await bootFixture();
    cliBundle();
  }, 900_000);

  it('auto: KVM where it runs a guest, else TCG with one line on stderr and the reason in --json', async () => {
    const r = await runCli(['boot', fx.qcow2, '--direct-kernel', '--json'], { killAfterMs: BOOT_TEST_MS - 20_000 });
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc).toMatchObject({ ok: true, reachedLogin: true, accel: { requested: 'auto' } });
    if (!kvmOpens()) expect(doc.accel.used).toBe('tcg');
    if (doc.accel.used === 'tcg') {
      // No usable device, or one on which the probe's kernel hung or failed (this build host kind).
      expect(doc.accel.reason).toMatch(kvmOpens() ? /^KVM did not run a guest/ : /^(no|cannot open) \/dev\/kvm/);
      expect(r.stderr).toBe(`appliance-forge boot: ${doc.accel.reason}; using TCG\n`);
    } else {
      expect(doc.accel).toEqual({ requested: 'auto', used: 'kvm' });
      expect(r.stderr).toBe('');
    }
    expect(qemuPidsFor(fx.qcow2)).toEqual([]);
  }, BOOT_TEST_MS);

  it('kvm: fails with one line and exit 1 where KVM is unusable, boots under KVM where it works', async () => {
    const r = await runCli(['boot', fx.qcow2, '--direct-kernel', '--accel', 'kvm', '--json'], { killAfterMs: BOOT_TEST_MS - 20_000 });
    if (r.code === 1 && r.stdout === '') {
      expect(r.stderr).toMatch(kvmOpens()
        ? /^appliance-forge boot: KVM cannot be used: KVM did not run a guest[^\n]*\n$/
        : /^appliance-forge boot: KVM cannot be used: (no \/dev\/kvm \(this host has no KVM|cannot open \/dev\/kvm read-write)[^\n]*\n$/);
    } else {
      expect(kvmOpens()).toBe(true);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, accel: { requested: 'kvm', used: 'kvm' } });
    }
    expect(qemuPidsFor(fx.qcow2)).toEqual([]);
  }, BOOT_TEST_MS);

  it('tcg: boots under TCG, says nothing of KVM, and QEMU holds no /dev/kvm', async () => {
    let seen: { args: string[]; fds: string[] } | undefined;
    const running = runCli(['boot', fx.qcow2, '--direct-kernel', '--accel', 'tcg', '--json'], { killAfterMs: BOOT_TEST_MS - 20_000 });
    for (let i = 0; i < 1200 && !seen; i++) {
      await new Promise((res) => setTimeout(res, 100));
      const [pid] = qemuPidsFor(fx.qcow2);
      if (pid === undefined) continue;
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const fds = readdirSync(`/proc/${pid}/fd`).map((fd) => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`);
          } catch {
            return '';
          }
        });
        seen = { args, fds };
      } catch {
        // gone between the two reads: look again
      }
    }
    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, accel: { requested: 'tcg', used: 'tcg' } });
    expect(seen).toBeDefined();
    expect(seen!.args.slice(seen!.args.indexOf('-accel'), seen!.args.indexOf('-accel') + 2)).toEqual(['-accel', 'tcg']);
    expect(seen!.args.join(' ')).not.toContain('/dev/kvm');
    expect(seen!.fds).not.toContain('/dev/kvm');
    expect(qemuPidsFor(fx.qcow2)).toEqual([]);
  }, BOOT_TEST_MS);
});
