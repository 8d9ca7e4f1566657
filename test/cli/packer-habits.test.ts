// What Packer and Terraform users type, through the real CLI (a child process) against the real
// reference server on 127.0.0.1: `-var`/`-var-file` for `${var:NAME}`, `--only`/`--except` builders,
// and `--timeout`, which cancels the generation it waits on. Values read through `${var:}` may be
// masked in the output, so their effect is checked by what the service says of them (a package that
// exists or not), never by their echo.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../support/reference-server';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, connectionEnv, runCli } from './helpers/cli';

interface Change { kind: string; name: string; action: string }

describe('--var / --var-file, --only / --except, --timeout', () => {
  let svc: TestService | undefined;
  let env: Record<string, string>;
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
    env = connectionEnv(svc.server.url, svc);
  });
  afterAll(() => svc?.close());

  /** local.yml with its second package and its root password read from ${var:}, and two var files. */
  function varsWorkspace(): string {
    const dir = examplesWorkspace();
    const text = readFileSync(path.join(dir, 'local.yml'), 'utf8').replace('      - nginx\n', "      - '${var:PKG}'\n").replace('password: forge-demo', 'password: ${var:ROOT_PW}');
    writeFileSync(path.join(dir, 'vars.yml'), text);
    writeFileSync(path.join(dir, 'good.yml'), 'PKG: nginx\nROOT_PW: pw-from-a-file-4711\n');
    writeFileSync(path.join(dir, 'bad.json'), '{"PKG": "no-such-package-xyz"}');
    return dir;
  }

  it('${var:NAME} takes -var and -var-file values: files in order, then flags, a later value wins; unset ones are named', async () => {
    const dir = varsWorkspace();
    const plan = (...args: string[]) => runCli(['plan', 'vars.yml', ...args], { cwd: dir, env });
    const unset = await plan();
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/vars\.yml:14:10: error: stack\.os\.pkgs\S*: variable PKG is not set: give it with --var PKG=VALUE or --var-file/);
    expect(unset.stderr).toContain('variable ROOT_PW is not set');
    const ok = await plan('--var-file', 'good.yml', '--json');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain('pw-from-a-file-4711');
    expect((JSON.parse(ok.stdout) as { changes: Change[] }).changes.filter((c) => c.kind === 'package')).toHaveLength(2);
    // A later file wins: the package the service does not have is a declaration problem (exit 2).
    const later = await plan('-var-file', 'good.yml', '-var-file=bad.json');
    expect(later.code).toBe(2);
    expect(later.stderr).toMatch(/vars\.yml:14:9: error: package "\S+" not found in Debian 13/);
    // A flag wins over every file, wherever it stands; between flags the later wins.
    expect((await plan('-var', 'PKG=nginx', '--var-file', 'good.yml', '--var-file', 'bad.json')).code).toBe(0);
    expect((await plan('--var-file', 'good.yml', '--var=PKG=no-such-package-xyz', '-var', 'PKG=nginx')).code).toBe(0);
    expect((await plan('--var-file', 'good.yml', '-var', 'PKG=nginx', '--var', 'PKG=no-such-package-xyz')).code).toBe(2);
    // Flags that cannot be used are usage errors, and a value is never echoed.
    const noEq = await plan('--var', 'secret-looking-text');
    expect([noEq.code, noEq.stderr]).toEqual([2, expect.stringContaining('--var takes NAME=VALUE')]);
    expect(noEq.stderr).not.toContain('secret-looking-text');
    const missing = await plan('--var-file', 'nope.yml');
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining('--var-file nope.yml: no such file')]);
    writeFileSync(path.join(dir, 'nested.yml'), 'PKG: {name: nginx}\n');
    const nested = await plan('--var-file', 'nested.yml');
    expect([nested.code, nested.stderr]).toEqual([2, expect.stringContaining('--var-file nested.yml: PKG must be a text, a number or a boolean')]);
  });

  it('validate reports an unset ${var:} as it does an unset ${env:}, and takes --var / --var-file too', async () => {
    const dir = varsWorkspace();
    const bare = await runCli(['validate', 'vars.yml'], { cwd: dir });
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stderr).toMatch(/vars\.yml:14:10: warning: stack\.os\.pkgs\S*: variable PKG is not set: give it with --var PKG=VALUE or --var-file, or the Action's vars or var-files input \(plan and apply will need it\)/);
    expect(bare.stdout).toContain('vars.yml: valid (0 errors, 2 warnings); reads ${var:PKG}, ${var:ROOT_PW}');
    const json = await runCli(['validate', 'vars.yml', '--json', '-var', 'PKG=openssh-server', '--var-file', 'good.yml'], { cwd: dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, warnings: 0, env: [], vars: ['PKG', 'ROOT_PW'] });
    expect(json.stdout).not.toContain('pw-from-a-file-4711');
  });

  it('--only / --except pick builders by type or index, -only as Packer spells it; an unknown name lists the builders', async () => {
    const dir = examplesWorkspace();
    const images = async (...args: string[]) => {
      const r = await runCli(['plan', 'matrix.yml', '--json', ...args], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { changes: Change[] }).changes.filter((c) => c.kind === 'image').map((c) => c.name);
    };
    expect(await images()).toEqual(['QCOW2', 'VHD']);
    expect(await images('--only', 'VHD')).toEqual(['VHD']);
    expect(await images('-only=qcow2')).toEqual(['QCOW2']);
    expect(await images('--only', '1', '--only', '0')).toEqual(['QCOW2', 'VHD']);
    expect(await images('--except', 'vhd')).toEqual(['QCOW2']);
    expect(await images('-except', '0,1')).toEqual([]);
    const unknown = await runCli(['plan', 'matrix.yml', '--only', 'QCOW2,OVA'], { cwd: dir, env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--only: no builder is "OVA" (the declaration\'s builders, by index and type: 0 QCOW2, 1 VHD)');
    const both = await runCli(['apply', 'matrix.yml', '--only', 'VHD', '--except', 'QCOW2'], { cwd: dir, env });
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining('--only and --except exclude each other')]);
  });

  it('--timeout must be a duration', async () => {
    for (const t of ['soon', '0s', '10d', '-5m', '600h', '1m30']) {
      const r = await runCli(['plan', 'local.yml', `--timeout=${t}`], { cwd: examplesWorkspace(), env });
      expect([t, r.code, r.stderr]).toEqual([t, 2, expect.stringContaining('--timeout must be a duration from 1s to 596h')]);
    }
  });
});

describe('--timeout on a generation that does not end', () => {
  // A labelled stand-in for a Debian mirror that accepts connections and never answers: the build
  // waits on it (30 s), so the generation is still running when the bound runs out.
  let mirror: Server;
  const sockets: Socket[] = [];
  let ref: ReferenceServer<'alice'>;
  beforeAll(async () => {
    cliBundle();
    mirror = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => mirror.listen(0, '127.0.0.1', resolve));
    const { port } = mirror.address() as { port: number };
    ref = await startReferenceServer({ alice: {} }, { prefix: 'af-timeout-', mirror: { archive: `http://127.0.0.1:${port}/debian` } });
  });
  afterAll(async () => {
    await ref?.close();
    for (const s of sockets) s.destroy();
    mirror?.close();
  });

  it('apply --timeout 15s cancels the generation on the service and fails with exit 1, saying so', async () => {
    const alice = ref.users.alice;
    const env = connectionEnv(ref.url, alice);
    const started = Date.now();
    const r = await runCli(['apply', 'local.yml', '--timeout', '15s'], { cwd: examplesWorkspace(), env });
    const seconds = (Date.now() - started) / 1000;
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('apply failed: timed out after 15s (--timeout): aborted; generation cancelled');
    expect(r.stderr).not.toContain('interrupted');
    // Well before the mirror's own 30 s would have failed the build.
    expect(seconds).toBeLessThan(28);
    const c = ref.client(alice);
    const app = (await c.appliance_getAll()).appliances![0]!;
    const aid = app.uri!.split('/').pop()!;
    const imgs = (await c.machineImage_getAll({ aid })).images ?? [];
    const states = await Promise.all(imgs.map((i) => c.machineImageStatus_get({ aid, itid: i.uri!.split('/').pop()! })));
    expect(states.map((s) => s.cancelled)).toEqual([true]);
  });
});
