// Whether this host runs another architecture's programs (src/host/foreign-arch.ts): this machine's
// binfmt_misc after scripts/prereqs.sh build, and stand-in binfmt_misc folders of real files for each
// way it falls short.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { foreignArchProblem, nativeDebianArch } from '../../src/host/foreign-arch';

const PATH = process.env.PATH;
const root = mkdtempSync(path.join(tmpdir(), 'af-foreign-arch-'));
let n = 0;

/** A binfmt_misc stand-in: `status` when mounted, and the named entries' text. */
function binfmt(mounted: boolean, entries: Readonly<Record<string, string>> = {}): string {
  const dir = mkdtempSync(path.join(root, `${n++}-`));
  if (mounted) writeFileSync(path.join(dir, 'status'), 'enabled\n');
  for (const [name, text] of Object.entries(entries)) writeFileSync(path.join(dir, name), text);
  return dir;
}

/** An entry as the kernel shows it, with `state` and `flags`. */
const entry = (state: string, flags: string): string =>
  `${state}\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: ${flags}\noffset 0\nmagic 7f454c460201010000000000000000000200b700\n`;

const FIX = /As root: apt-get install arch-test binfmt-support qemu-user-static, mount -t binfmt_misc binfmt_misc \/proc\/sys\/fs\/binfmt_misc and update-binfmts --enable qemu-aarch64 \(bash scripts\/prereqs\.sh build does all three\)$/;

afterEach(() => {
  process.env.PATH = PATH;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('foreignArchProblem', () => {
  it('this host (after prereqs.sh build): its own architecture and arm64', () => {
    expect(nativeDebianArch()).toBe('amd64');
    expect(foreignArchProblem('amd64')).toBeUndefined();
    expect(foreignArchProblem('arm64')).toBeUndefined();
  });

  it('its own architecture needs no binfmt_misc at all', () => {
    expect(foreignArchProblem(nativeDebianArch(), { binfmtDir: binfmt(false) })).toBeUndefined();
  });

  it('an enabled entry with the F flag is enough', () => {
    expect(foreignArchProblem('arm64', { binfmtDir: binfmt(true, { 'qemu-aarch64': entry('enabled', 'PF') }) })).toBeUndefined();
  });

  it('no entry for the architecture: the packages, the mount and the command that registers it', () => {
    const dir = binfmt(true, { 'qemu-aarch64': entry('enabled', 'PF') });
    expect(foreignArchProblem('s390x', { binfmtDir: dir })).toBe(
      's390x images cannot be built on this amd64 host: binfmt_misc has no qemu-s390x entry. As root: apt-get install arch-test binfmt-support qemu-user-static, mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc and update-binfmts --enable qemu-s390x',
    );
    expect(foreignArchProblem('arm64', { binfmtDir: binfmt(true) })).toMatch(/^arm64 images cannot be built on this amd64 host: binfmt_misc has no qemu-aarch64 entry\. /);
    expect(foreignArchProblem('arm64', { binfmtDir: binfmt(true) })).toMatch(FIX);
  });

  it("this host's binfmt_misc: an architecture it has no entry for", () => {
    const unregistered = Object.entries({ s390x: 'qemu-s390x', riscv64: 'qemu-riscv64', mips64el: 'qemu-mips64el', loong64: 'qemu-loongarch64' }).find(
      ([, e]) => !existsSync(`/proc/sys/fs/binfmt_misc/${e}`),
    );
    expect(unregistered).toBeDefined();
    const [arch, name] = unregistered!;
    expect(foreignArchProblem(arch)).toContain(`binfmt_misc has no ${name} entry. As root: apt-get install arch-test binfmt-support qemu-user-static, `);
  });

  it('binfmt_misc not mounted: says so, with the mount', () => {
    expect(foreignArchProblem('arm64', { binfmtDir: binfmt(false) })).toMatch(/^arm64 images cannot be built on this amd64 host: binfmt_misc is not mounted at .*af-foreign-arch-.*\. As root: /);
    expect(foreignArchProblem('arm64', { binfmtDir: binfmt(false) })).toMatch(FIX);
  });

  it('a disabled entry, and one without the F flag (a user namespace cannot open its interpreter)', () => {
    expect(foreignArchProblem('arm64', { binfmtDir: binfmt(true, { 'qemu-aarch64': entry('disabled', 'PF') }) })).toMatch(/: binfmt_misc's qemu-aarch64 entry is disabled\. /);
    const noF = foreignArchProblem('arm64', { binfmtDir: binfmt(true, { 'qemu-aarch64': entry('enabled', 'P') }) });
    expect(noF).toMatch(/: binfmt_misc's qemu-aarch64 entry lacks the F flag \(a build's user namespace cannot open its interpreter\): remove it \(echo -1 > .*\/qemu-aarch64\) and let Debian's qemu-user-static register it\. /);
    expect(noF).toMatch(FIX);
  });

  it('arch-test missing (PATH without /usr/bin): named with the binfmt fault in the one message', () => {
    process.env.PATH = '/nonexistent';
    expect(foreignArchProblem('arm64', { binfmtDir: binfmt(true, { 'qemu-aarch64': entry('enabled', 'PF') }) })).toMatch(/: arch-test is not installed\. As root: /);
    expect(foreignArchProblem('arm64', { binfmtDir: binfmt(true) })).toMatch(/: binfmt_misc has no qemu-aarch64 entry; arch-test is not installed\. As root: .*\(bash scripts\/prereqs\.sh build does all three\)$/);
  });

  it('an architecture with no known emulator', () => {
    expect(foreignArchProblem('vax', { binfmtDir: binfmt(true) })).toMatch(/^vax images cannot be built on this amd64 host: no emulator is known for vax \(known: amd64, arm64, armel, /);
  });
});
