// End to end, as a user checks a build: a Debian 12 declaration (examples/local.yml on release 12, its plain
// root password, whose salt comes from the template, and an ssh key) applied twice by the command line on the
// embedded server, each from cold (its own data folder and cache: two OS layers built from the mirror), gives
// the same sha256 for the raw and the qcow2: the first copies the OS layer into memory for its base disk, the
// second onto the disk (`APPLIANCE_FORGE_TREE_IN_MEMORY=0`, src/imaging/memory-folder.ts). A changed software
// file changes the digests, and `diff` names that file. The image then boots by the fast path (its kernel
// started by QEMU) until nginx answers 200 on a forwarded loopback port, and its SBOM says Debian 12. Costs:
// two cold OS layers, three applies, one boot.
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { examplesWorkspace } from '../engine/helpers/service';
import { cliBundle, runCli } from '../cli/helpers/cli';
import { cyclonedxValidator } from '../support/sbom-schemas';

/** sha256sum's digest: coreutils, not the code under test (and images are over Node's 2 GiB read limit). */
const sha256 = (file: string): string => execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0]!;

describe.runIf(process.getuid?.() === 0)('real image, reproducible: Debian 12 twice from cold, one changed file, the fast boot', () => {
  let dir: string;
  const built: Record<string, { qcow2: string; raw: string }> = {};

  /** `apply` on the embedded server with its own data folder and OS-layer cache; the image files kept aside under `tag`. */
  async function apply(tag: string, cache: string, env: Record<string, string> = {}): Promise<{ qcow2: string; raw: string }> {
    const r = await runCli(['apply', 'local12.yml', '--data-dir', `data-${cache}`, '--output', `out-${tag}`, '--json'], {
      cwd: dir, env: { APPLIANCE_FORGE_CACHE_DIR: path.join(dir, `cache-${cache}`), ...env }, killAfterMs: 1_500_000,
    });
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const files = (JSON.parse(r.stdout) as { files: Array<{ path: string }> }).files.map((f) => path.resolve(dir, f.path));
    const pick = (ext: string): string => {
      const f = files.find((x) => x.endsWith(ext));
      expect(f, JSON.stringify(files)).toBeDefined();
      // Kept under its tag (moved: a copy would write the raw disk's holes): a later apply replaces the output.
      const kept = path.join(dir, `${tag}${ext}`);
      renameSync(f!, kept);
      return kept;
    };
    return { qcow2: pick('.qcow2'), raw: pick('.raw') };
  }

  beforeAll(async () => {
    cliBundle();
    dir = examplesWorkspace('af-repro-');
    chmodSync(dir, 0o711); // the caches inside: the build's user namespace root passes through (src/host/sandbox.ts)
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'e2e@forge', '-f', path.join(dir, 'key')]);
    const key = readFileSync(path.join(dir, 'key.pub'), 'utf8').trim();
    const decl = readFileSync(path.join(dir, 'local.yml'), 'utf8')
      .replace("    version: '13'", "    version: '12'")
      .replace(/    rootUser:\n      password: forge-demo\n/, `    rootUser:\n      password: forge-demo\n      sshKeys:\n        - { name: e2e, publicKey: "${key}" }\n`)
      .replace('builders:\n', 'builders:\n  - type: Raw Virtual Disk\n');
    expect(decl).toContain("version: '12'");
    expect(decl).toContain('publicKey: "ssh-ed25519 ');
    writeFileSync(path.join(dir, 'local12.yml'), decl);
    built.a = await apply('a', 'a');
    built.b = await apply('b', 'b', { APPLIANCE_FORGE_TREE_IN_MEMORY: '0' });
    writeFileSync(path.join(dir, 'files/index.html'), readFileSync(path.join(dir, 'files/index.html'), 'utf8').replace('</body>', '<p>changed</p></body>'));
    built.c = await apply('c', 'a');
  }, 4_500_000);

  it('two cold builds give the same bytes; one changed software file changes them, and diff names it', async () => {
    const { a, b, c } = built as Record<'a' | 'b' | 'c', { qcow2: string; raw: string }>;
    expect(sha256(b.raw)).toBe(sha256(a.raw));
    expect(sha256(b.qcow2)).toBe(sha256(a.qcow2));
    expect(sha256(c.qcow2)).not.toBe(sha256(a.qcow2));
    expect(sha256(c.raw)).not.toBe(sha256(a.raw));
    const same = await runCli(['diff', a.qcow2, b.qcow2]);
    expect([same.code, same.stdout], same.stderr).toEqual([0, expect.stringMatching(/^identical \(\d+ files\)\n$/)]);
    const d = await runCli(['diff', '--json', a.qcow2, c.qcow2]);
    expect(d.code, d.stderr).toBe(1);
    const names = (JSON.parse(d.stdout) as { differences: Array<{ section: string; name: string }> }).differences.map((x) => `${x.section}: ${x.name}`);
    expect(names).toContain('files: /var/www/example/index.html: sha256');
  }, 900_000);

  it('the image boots by the fast path until nginx answers 200; its SBOM validates and says Debian 12', async () => {
    const r = await runCli(['boot', built.c!.qcow2, '--direct-kernel', '--http', '80', '--json', '--timeout', '600'], { killAfterMs: 700_000 });
    expect(r.code, r.stderr + r.stdout.slice(-2000)).toBe(0);
    const doc = JSON.parse(r.stdout) as { ok: boolean; path: string; http: { status: number } };
    expect(doc).toMatchObject({ ok: true, path: 'direct-kernel', http: { status: 200 } });
    // The SBOMs stay where apply saved them, beside the image it wrote (the image itself was moved aside).
    const cdx = JSON.parse(readFileSync(savedFile(dir, 'out-c', '.qcow2.cdx.json'), 'utf8')) as { components: Array<{ name: string; purl?: string }> };
    expect(cyclonedxValidator()(cdx)).toEqual([]);
    const nginx = cdx.components.find((x) => x.name === 'nginx');
    expect(nginx?.purl).toMatch(/^pkg:deb\/debian\/nginx@.*distro=debian-12/);
  }, 900_000);
});

/** The one file whose name ends with `ext` that apply wrote to `out`. */
function savedFile(dir: string, out: string, ext: string): string {
  const names = execFileSync('ls', [path.join(dir, out)], { encoding: 'utf8' }).split('\n').filter((n) => n.endsWith(ext));
  expect(names).toHaveLength(1);
  return path.join(dir, out, names[0]!);
}
