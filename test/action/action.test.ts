// The committed Action bundle, run as GitHub runs it: a node process with INPUT_* variables
// (hyphens kept), GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, against the real reference server
// (and the real Glance for publication). Outputs and summary are read back from the files.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ActionResult } from '../../action/src/result';
import { PROBLEMS_LISTED } from '../../src/engine';
import { node24 } from '../support/node24';
import { imagesNamed, openStackServices } from '../support/openstack';
import { examplesWorkspace, openStackEnv, startTestService, type TestService } from '../engine/helpers/service';
import { runCli } from '../cli/helpers/cli';

const root = path.resolve(__dirname, '../..');
const bundle = path.join(root, 'action/dist/index.js');
const osEnv = openStackEnv();
/** Node 24 for the runs that need it (fetched once into the cache folder). */
const n24 = node24();
if (!osEnv) console.warn('SKIP publication through the Action: the real Keystone + Glance cannot start here');

const temps: string[] = [];
/** A temporary folder, removed after this file's tests (the images in them are hundreds of MB). */
function tempDir(prefix: string): string {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  temps.push(d);
  return d;
}
/** A copy of the examples folder (removed like tempDir's). */
function workspace(): string {
  const d = examplesWorkspace('af-gha-ws-');
  temps.push(d);
  return d;
}
/** The runner's temporary folder of a workspace's job: beside the workspace, outside it (removed like tempDir's). */
function runnerTemp(cwd: string): string {
  const d = `${cwd}.runner-temp`;
  if (!temps.includes(d)) temps.push(d);
  return d;
}
afterAll(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface ActionRun {
  code: number | null;
  stdout: string;
  outputs: Record<string, string>;
  summary: string;
}

interface RunOptions {
  cwd: string;
  env?: Record<string, string>;
  /** The node binary (default: this one). */
  node?: string;
  /** The bundle to run (default: the committed action/dist/index.js). */
  bundle?: string;
  /** Arguments before the bundle (`node` is then a wrapper such as setpriv). */
  args?: string[];
}

/** Runs the bundle with `inputs` as INPUT_<NAME> (upper-cased, hyphens kept), like the runner. */
function runAction(inputs: Record<string, string>, o: RunOptions): Promise<ActionRun> {
  const tmp = tempDir('af-gha-');
  const outFile = path.join(tmp, 'output');
  const summaryFile = path.join(tmp, 'summary');
  const envFile = path.join(tmp, 'env');
  for (const f of [outFile, summaryFile, envFile]) writeFileSync(f, '');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '', GITHUB_OUTPUT: outFile, GITHUB_STEP_SUMMARY: summaryFile, GITHUB_ENV: envFile, GITHUB_WORKSPACE: o.cwd, RUNNER_TEMP: runnerTemp(o.cwd), ...o.env,
  };
  for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.toUpperCase()}`] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(o.node ?? process.execPath, [...(o.args ?? []), o.bundle ?? bundle], { cwd: o.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stdout += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, outputs: readOutputs(outFile), summary: readFileSync(summaryFile, 'utf8') }));
  });
}

/** `name<<DELIM\nvalue\nDELIM` records of the GITHUB_OUTPUT file. */
function readOutputs(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of readFileSync(file, 'utf8').matchAll(/^([\w-]+)<<(\S+)\n([\s\S]*?)\n\2$/gm)) out[m[1]!] = m[3]!;
  return out;
}

/** Output without the `::add-mask::` commands (which necessarily carry the secret to the runner). */
const unmasked = (s: string) => s.split('\n').filter((l) => !l.startsWith('::add-mask::')).join('\n');

describe('the bundled GitHub Action', () => {
  let svc: TestService;
  let creds: Record<string, string>;
  beforeAll(async () => {
    svc = await startTestService();
    creds = { url: svc.server.url, user: svc.login, 'api-key': svc.publicKey, 'secret-key': svc.secretKey };
  });
  afterAll(async () => svc?.close());

  it('the committed bundle equals a fresh build', () => {
    const out = execFileSync(process.execPath, [path.join(root, 'scripts/build-action.mjs'), '--check'], { encoding: 'utf8' });
    expect(out).toContain('up to date');
  });

  it('action.yml runs the bundle on node24 with the documented inputs and outputs', () => {
    const meta = parse(readFileSync(path.join(root, 'action/action.yml'), 'utf8')) as {
      runs: { using: string; main: string }; inputs: Record<string, { default?: string }>; outputs: Record<string, unknown>;
    };
    expect(meta.runs).toEqual({ using: 'node24', main: 'dist/index.js' });
    expect(Object.keys(meta.inputs)).toEqual(['file', 'url', 'user', 'api-key', 'secret-key', 'password', 'mode', 'strict', 'allow-outside-sources', 'publish', 'prune', 'timeout-minutes', 'output-dir', 'layer-archive-dir', 'builders', 'vars', 'var-files']);
    expect(meta.inputs.prune!.default).toBe('false');
    expect(meta.inputs.publish!.default).toBe('true');
    expect(Object.keys(meta.outputs)).toEqual(['appliance-uri', 'image-uris', 'cloud-ids', 'image-files', 'sbom-files', 'target', 'changes', 'subject-checksums', 'result']);
  });

  it('applies local.yml: outputs, groups, summary; a second run reuses the image', async () => {
    const cwd = workspace();
    const r = await runAction({ file: 'local.yml', ...creds }, { cwd });
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain(`::add-mask::${svc.secretKey}`);
    expect(r.stdout).toMatch(/::group::Software bundles\n/);
    expect(r.stdout).toContain('::endgroup::');
    expect(r.outputs['appliance-uri']).toMatch(/^users\/alice\/appliances\/\d+$/);
    const result = (JSON.parse(r.outputs.result!) as ActionResult).images;
    expect(result).toEqual([expect.objectContaining({ builder: 0, format: 'QCOW2', action: 'generate', reused: false, cloudId: null, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
    expect(r.outputs['image-uris']).toBe(result[0]!.imageUri);
    expect(r.outputs.changes).toBe('true');
    expect(r.summary).toContain('<h3>Images of example-web 1.0</h3>');
    expect(r.summary).toContain('<td>QCOW2</td>');
    const again = await runAction({ file: 'local.yml', ...creds, 'output-dir': 'images' }, { cwd });
    expect(again.code, again.stdout).toBe(0);
    const file = path.join(cwd, 'images', 'example-web-1.0.qcow2');
    const second = JSON.parse(again.outputs.result!) as ActionResult;
    expect(second).toMatchObject({ ok: true, mode: 'apply', summary: { changes: false }, applianceUri: r.outputs['appliance-uri'] });
    // The SBOMs saved beside the image: in its entry and in the sbom-files output.
    expect(second.images[0]!.sboms).toEqual({ spdx: `${file}.spdx.json`, cyclonedx: `${file}.cdx.json` });
    expect(again.outputs['sbom-files']!.split('\n').sort()).toEqual([`${file}.cdx.json`, `${file}.spdx.json`]);
    expect(second.images).toEqual([expect.objectContaining({ action: 'reuse', reused: true, imageUri: result[0]!.imageUri, file })]);
    expect(again.outputs.changes).toBe('false');
    // plan, after that: the same shape, nothing to do, the same image.
    const plan = await runAction({ file: 'local.yml', ...creds, mode: 'plan' }, { cwd });
    expect(plan.code, plan.stdout).toBe(0);
    const planned = JSON.parse(plan.outputs.result!) as ActionResult;
    expect(Object.keys(planned)).toEqual(Object.keys(second));
    expect(Object.keys(planned.images[0]!)).toEqual(Object.keys(second.images[0]!));
    expect(planned).toMatchObject({ ok: true, mode: 'plan', applianceUri: r.outputs['appliance-uri'], summary: { changes: false, generate: 0, reuseImages: 1 } });
    expect(planned.images).toEqual([{ ...second.images[0]!, file: null, sboms: {} }]);
    expect(plan.outputs.changes).toBe('false');
    // output-dir: the image file for actions/upload-artifact, its sha256 checked by a tool that is not ours.
    expect(again.outputs['image-files']).toBe(file);
    expect(execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0]).toBe(result[0]!.sha256);
    // The size targets (docs/benchmarks.md) for the image of examples/local.yml, compressed as bench/real-image.mjs does (gzip -6).
    expect(statSync(file).size).toBeLessThanOrEqual(250e6);
    expect(Number(execFileSync('sh', ['-c', 'gzip -6 -c "$1" | wc -c', 'sh', file], { encoding: 'utf8' }))).toBeLessThanOrEqual(100e6);
    // Its SBOMs beside it; subject-checksums: a sha256sum file of the images, for actions/attest-build-provenance.
    expect(JSON.parse(readFileSync(`${file}.spdx.json`, 'utf8'))).toMatchObject({ spdxVersion: 'SPDX-2.3', name: 'example-web-1.0.qcow2' });
    expect(JSON.parse(readFileSync(`${file}.cdx.json`, 'utf8'))).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.6' });
    for (const x of [r, again]) {
      const subjects = x.outputs['subject-checksums']!;
      expect(subjects.startsWith(runnerTemp(cwd)), subjects).toBe(true);
      expect(readFileSync(subjects, 'utf8')).toBe(`${result[0]!.sha256!}  example-web-1.0.qcow2\n`);
    }
    // sha256sum itself checks the downloaded image against the list.
    expect(execFileSync('sha256sum', ['-c', again.outputs['subject-checksums']!], { cwd: path.join(cwd, 'images'), encoding: 'utf8' })).toBe('example-web-1.0.qcow2: OK\n');
    expect(plan.outputs['subject-checksums']).toBeUndefined();
    for (const x of [r, again]) expect(unmasked(x.stdout) + JSON.stringify(x.outputs) + x.summary).not.toContain(svc.secretKey);
  });

  it('mode plan changes nothing and summarises the plan', async () => {
    const cwd = workspace();
    // A stack the service has never seen: everything is to create.
    writeFileSync(path.join(cwd, 'plan.yml'), readFileSync(path.join(cwd, 'local.yml'), 'utf8').replace('name: example-web', 'name: example-plan'));
    const r = await runAction({ file: 'plan.yml', mode: 'plan', ...creds }, { cwd });
    expect(r.code, r.stdout).toBe(0);
    const plan = JSON.parse(r.outputs.result!) as ActionResult;
    expect(plan).toMatchObject({ ok: true, mode: 'plan', target: svc.server.url, applianceUri: null, summary: { changes: true, generate: 1 } });
    expect(r.outputs.target).toBe(svc.server.url);
    // result is the document of `appliance-forge plan --json`: `changes` the list, `ok`, the same images.
    expect(plan.changes).toContainEqual(expect.objectContaining({ kind: 'appliance', name: 'example-plan 1.0', action: 'create', before: null }));
    const cli = await runCli(['plan', 'plan.yml', '--json'], {
      cwd, env: { APPLIANCE_FORGE_URL: creds.url!, APPLIANCE_FORGE_USER: creds.user!, APPLIANCE_FORGE_API_KEY: creds['api-key']!, APPLIANCE_FORGE_SECRET_KEY: creds['secret-key']! },
    });
    expect(cli.code, cli.stderr).toBe(0);
    const { warnings, ...document } = JSON.parse(cli.stdout) as ActionResult & { warnings: unknown[] };
    expect(warnings).toEqual([]);
    expect(plan).toEqual(document);
    expect(plan.images).toEqual([{ builder: 0, format: 'QCOW2', action: 'generate', imageUri: null, sha256: null, size: null, reused: false, displayName: null, cloudId: null, publicationReused: null, file: null, sboms: {} }]);
    expect(r.outputs.changes).toBe('true');
    expect(r.summary).toContain('<h3>Plan for example-plan 1.0</h3>');
  });

  it('prune: true plans the removal of superseded images (as apply --prune); off by default', async () => {
    const cwd = workspace();
    const f = path.join(cwd, 'local.yml');
    writeFileSync(f, readFileSync(f, 'utf8').replace("version: '1.0'\n  description", "version: '9.1-prune'\n  description"));
    // The appliance as another tool left it, with a generation that was cancelled: nothing to reuse.
    const c = svc.client();
    const dist = (await c.os_getAll({})).distributions!.find((d) => d.name === 'Debian' && d.version === '13')!;
    const app = await c.appliance_create({ body: { name: 'example-web', version: '9.1-prune', distributionUri: dist.uri! } });
    const aid = app.uri!.split('/').pop()!;
    const profile = (await c.osTemplate_getAll({ id: dist.uri!.split('/').pop()! })).distribProfiles!.find((p) => p.name === 'Minimal')!;
    await c.applianceOSProfile_create({ aid, body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: profile.uri! } });
    const img = await c.machineImage_generate({ aid, body: { targetFormat: { name: 'QCOW2' } } });
    await c.machineImageGeneration_cancel({ aid, itid: img.uri!.split('/').pop()! });
    const deletes = (r: ActionRun) => (JSON.parse(r.outputs.result!) as ActionResult).changes.filter((x) => x.action === 'delete');
    const off = await runAction({ file: 'local.yml', ...creds, mode: 'plan' }, { cwd });
    expect(off.code, off.stdout).toBe(0);
    expect(deletes(off)).toEqual([]);
    const on = await runAction({ file: 'local.yml', ...creds, mode: 'plan', prune: 'true' }, { cwd });
    expect(on.code, on.stdout).toBe(0);
    expect(deletes(on)).toEqual([expect.objectContaining({ kind: 'image', name: 'QCOW2', before: expect.objectContaining({ uri: img.uri }) })]);
    expect((JSON.parse(on.outputs.result!) as ActionResult).summary.remove).toBe(1);
    expect(on.stdout).toContain(`- image QCOW2: delete (${img.uri})`);
  });

  it('mode validate checks the file offline (no url, no credentials), as appliance-forge validate --json does', async () => {
    const cwd = workspace();
    const ok = await runAction({ file: 'local.yml', mode: 'validate' }, { cwd });
    expect(ok.code, ok.stdout).toBe(0);
    const cli = await runCli(['validate', 'local.yml', '--json'], { cwd });
    expect(JSON.parse(ok.outputs.result!)).toEqual({ mode: 'validate', ...(JSON.parse(cli.stdout) as object) });
    expect(JSON.parse(ok.outputs.result!)).toMatchObject({ ok: true, errors: 0, warnings: 0 });
    expect(ok.summary).toContain('<h3>Validation of local.yml: valid</h3>');
    // A typo is an error under strict, an unset variable is reported by name; nothing was started or written.
    writeFileSync(path.join(cwd, 'typo.yml'), readFileSync(path.join(cwd, 'local.yml'), 'utf8').replace('builders:', 'builders:\n  - type: QCOW2\n    hardwareSettings: {memory: "${env:AF_NOT_SET}"}\n    versoin: 2'));
    const bad = await runAction({ file: 'typo.yml', mode: 'validate', strict: 'true' }, { cwd });
    expect(bad.code).toBe(1);
    const result = JSON.parse(bad.outputs.result!) as { mode: string; ok: boolean; errors: number; problems: Array<{ line: number; severity: string; message: string }>; env: string[] };
    expect(result).toMatchObject({ mode: 'validate', ok: false, env: ['AF_NOT_SET'] });
    const typo = result.problems.find((p) => p.message.includes('versoin'));
    expect(typo).toMatchObject({ severity: 'error', line: expect.any(Number) });
    expect(bad.stdout).toContain(`::error file=typo.yml,line=${typo!.line},`);
    expect(bad.stdout).toMatch(/::error::\d+ errors? in typo\.yml/);
    expect(existsSync(path.join(cwd, '.appliance-forge'))).toBe(false);
    // Without strict the typo is a warning: the step passes.
    const lax = await runAction({ file: 'typo.yml', mode: 'validate' }, { cwd });
    expect(JSON.parse(lax.outputs.result!)).toMatchObject({ ok: lax.code === 0, env: ['AF_NOT_SET'] });
  });

  it('an invalid file becomes ::error annotations at the right lines and fails the step', async () => {
    const cwd = workspace();
    writeFileSync(path.join(cwd, 'bad.yml'), 'stack:\n  name: x\n  os: {name: Debian, version: "12", pkgs: [curl]}\nbuilders:\n  - type: QCOW2\n    colour: red\n    hardwareSettings:\n      memory: ${env:NOPE}\n');
    const r = await runAction({ file: 'bad.yml', ...creds }, { cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('::error file=bad.yml,line=2,col=3::stack.version is required');
    expect(r.stdout).toContain('::error file=bad.yml,line=8,col=15::builders[0].hardwareSettings.memory: environment variable NOPE is not set');
    expect(r.stdout).toContain('::warning file=bad.yml,line=6,col=5::unknown field "colour" in builders[0] (ignored)');
    expect(r.stdout).toMatch(/::error::2 problems in the declaration/);
    expect(r.summary).toContain('<h3>apply of bad.yml: failed</h3>');
    expect(r.summary).toContain('bad.yml:2:3: error: stack.version is required');
  });

  it('plan runs validate\'s checks first: a misspelled time zone is an annotation at its line, not a plan', async () => {
    const cwd = workspace();
    const text = readFileSync(path.join(cwd, 'local.yml'), 'utf8');
    const line = text.split('\n').findIndex((l) => l.includes('timezone: Etc/UTC')) + 1;
    writeFileSync(path.join(cwd, 'tz.yml'), text.replace('timezone: Etc/UTC', 'timezone: Europe/Pariss'));
    const r = await runAction({ file: 'tz.yml', ...creds, mode: 'plan' }, { cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`::error file=tz.yml,line=${line},col=15::stack.installation.timezone "Europe/Pariss" is not an IANA time zone name`);
    expect(r.stdout).not.toMatch(/to create/);
  });

  it('a binary file and a file of thousands of problems: bounded annotations and result, in the CLI\'s words', async () => {
    const cwd = workspace();
    writeFileSync(path.join(cwd, 'small.bin'), Buffer.concat([Buffer.from('stack:\n  name: x\n'), Buffer.from([0xff]), randomBytes(200_000)]));
    writeFileSync(path.join(cwd, 'dups.yml'), 'a: 1\n'.repeat(2000));
    const bin = await runAction({ file: 'small.bin', ...creds }, { cwd });
    expect(bin.code).toBe(1);
    expect(bin.stdout).toContain('::error file=small.bin,line=3,col=1::binary data, not YAML or JSON text');
    expect(bin.stdout.length).toBeLessThan(4096);
    const dups = await runAction({ file: 'dups.yml', mode: 'validate' }, { cwd });
    expect(dups.code).toBe(1);
    expect(dups.stdout.match(/^::error file=/gm)).toHaveLength(PROBLEMS_LISTED);
    expect(dups.stdout).toContain(`… and ${1999 - PROBLEMS_LISTED} more problems`);
    expect(JSON.parse(dups.outputs.result!)).toMatchObject({ errors: 1999, more: 1999 - PROBLEMS_LISTED, problems: { length: PROBLEMS_LISTED } });
    const planned = await runAction({ file: 'dups.yml', ...creds, mode: 'plan' }, { cwd });
    expect(planned.code).toBe(1);
    expect(planned.stdout.match(/^::error file=/gm)).toHaveLength(PROBLEMS_LISTED);
    expect(planned.stdout.length).toBeLessThan(8192);
  });

  it('a url without /api: the failure hints at the base URL, in the annotation and the job summary', async () => {
    const cwd = workspace();
    const root = svc.server.url.replace(/\/api\/?$/, '');
    const r = await runAction({ file: 'local.yml', ...creds, url: root, mode: 'plan' }, { cwd });
    expect(r.code).toBe(1);
    const hint = `is ${root} the service's base URL? The API is usually under /api (${root}/api)`;
    expect(r.stdout).toContain(hint);
    expect(r.summary).toContain('<h3>plan of local.yml: failed</h3>');
    expect(r.summary).toContain(hint);
  });

  it('a wrong secret key fails the step with a clear message and no secret', async () => {
    const cwd = workspace();
    const wrong = 'WRONG-action-secret-0123456789';
    const r = await runAction({ file: 'local.yml', ...creds, 'secret-key': wrong }, { cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/::error::the service refused the credentials \(401\)/);
    // The error line names the URL, the user and the inputs the credentials came from.
    expect(r.stdout).toContain(`the service at ${svc.server.url} refused user "${svc.login}" with the API key pair from input api-key and input secret-key;`);
    // The step summary says so too, not only an annotation.
    expect(r.summary).toContain('<h3>apply of local.yml: failed</h3>');
    expect(r.summary).toContain('the service refused the credentials (401)');
    expect(unmasked(r.stdout) + JSON.stringify(r.outputs) + r.summary).not.toContain(wrong);
  });

  /** The build step of examples/workflow.yml: its inputs and env, the runner's expressions given this machine's values. */
  function forgeStep(): { inputs: Record<string, string>; env: Record<string, string> } {
    const wf = parse(readFileSync(path.join(root, 'examples/workflow.yml'), 'utf8')) as {
      jobs: Record<string, { steps: Array<{ id?: string; uses?: string; with?: Record<string, string | number>; env?: Record<string, string> }> }>;
    };
    const step = wf.jobs.images!.steps.find((s) => s.id === 'forge')!;
    expect(step.uses).toMatch(/\/action@v1$/);
    const values: Record<string, string> = {
      'vars.FORGE_URL': svc.server.url, 'vars.FORGE_USER': svc.login, 'secrets.FORGE_API_KEY': svc.publicKey, 'secrets.FORGE_SECRET_KEY': svc.secretKey,
      ...Object.fromEntries(Object.entries(osEnv ?? {}).flatMap(([k, v]) => [[`vars.${k}`, v], [`secrets.${k}`, v]])),
    };
    const expand = (v: string | number) => String(v).replace(/\$\{\{\s*([\w.]+)\s*\}\}/g, (_, k: string) => values[k] ?? '');
    return {
      inputs: Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, expand(v)])),
      env: Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v)])),
    };
  }

  // The Action's most valuable mode: no platform at all. From the action folder alone under Node
  // 24, the embedded server builds examples/appliance.yml and publishes it to the real Glance.
  it.skipIf(!osEnv)('from the action folder alone under Node 24, url embedded builds and publishes to the real Glance', async () => {
    if (!n24.bin) return void console.warn(`SKIP the action folder under Node 24: ${n24.reason}`);
    const { inputs, env } = forgeStep();
    const alone = tempDir('af-gha-alone-');
    execFileSync('cp', ['-r', path.join(root, 'action'), alone]);
    const cwd = tempDir('af-gha-repo-');
    execFileSync('cp', ['-r', path.join(root, 'examples'), cwd]);
    const r = await runAction({ file: inputs.file!, url: 'embedded', 'layer-archive-dir': 'layers' }, { cwd, env, node: n24.bin, bundle: path.join(alone, 'action/dist/index.js') });
    expect(r.code, r.stdout).toBe(0);
    // The OS layers (one per builder here: plain, and with cloud-init) went into the folder an actions/cache step
    // keeps, each an archive and its meta.
    const kept = readdirSync(path.join(cwd, 'layers')).sort();
    const keys = [...new Set(kept.map((n) => path.basename(n, path.extname(n))))];
    expect(keys.length).toBeGreaterThan(0);
    expect(kept).toEqual(keys.flatMap((k) => [`${k}.json`, `${k}.tar`]).sort());
    const result = JSON.parse(r.outputs.result!) as ActionResult;
    expect(result.images.map((x) => [x.builder, x.format, x.action])).toEqual([[0, 'QCOW2', 'generate'], [1, 'OpenStack QCOW2', 'generate']]);
    const cloudId = result.images[1]!.cloudId!;
    expect(r.outputs['cloud-ids']).toBe(cloudId);
    // Glance, asked directly with an admin token (not through the code under test), has it, active.
    const os = openStackServices().env!;
    expect(await imagesNamed(os, result.images[1]!.displayName!)).toContainEqual([cloudId, 'active']);
    // The password is masked; the login and the domain (`Default`) are not secret fields: starring them would star the words.
    expect(r.stdout).toContain(`::add-mask::${osEnv!.OS_PASSWORD!}`);
    expect(unmasked(r.stdout) + JSON.stringify(r.outputs) + r.summary).not.toContain(osEnv!.OS_PASSWORD!);
    for (const plain of [osEnv!.OS_USERNAME!, osEnv!.OS_USER_DOMAIN_NAME!]) expect(r.stdout).not.toContain(`::add-mask::${plain}\n`);
  });

  it('runs examples/workflow.yml: its build step, with the inputs and env it gives, publishes to the real Glance', async (ctx) => {
    // Without OpenStack there is nothing to publish to (publish: false reads no OS_* variable: test/cli/plan-json.test.ts).
    if (!osEnv) return ctx.skip('the real Keystone + Glance cannot start here');
    const { inputs, env } = forgeStep();
    const cwd = tempDir('af-gha-repo-');
    execFileSync('cp', ['-r', path.join(root, 'examples'), cwd]);
    const r = await runAction(inputs, { cwd, env });
    expect(r.code, r.stdout).toBe(0);
    const result = (JSON.parse(r.outputs.result!) as ActionResult).images;
    expect(result.map((x) => x.format)).toEqual(['QCOW2', 'OpenStack QCOW2']);
    expect(r.outputs['cloud-ids']).toMatch(/^[0-9a-f-]{36}$/);
    expect(result[1]!.cloudId).toBe(r.outputs['cloud-ids']);
    expect(r.summary).toContain('<h4>Publications</h4>');
    // No secret anywhere: not the service key, not the password read through ${env:…}.
    const everything = unmasked(r.stdout) + readFileSync(path.join(cwd, 'examples/appliance.yml'), 'utf8') + JSON.stringify(r.outputs) + r.summary;
    for (const s of [svc.secretKey, osEnv.OS_PASSWORD!]) {
      expect(r.stdout).toContain(`::add-mask::${s}`);
      expect(everything).not.toContain(s);
    }
  });

  it('runs on Node 24 too (the runtime action.yml names)', async () => {
    if (!n24.bin) return void console.warn(`SKIP Node 24 run: ${n24.reason}`);
    const cwd = workspace();
    const r = await runAction({ file: 'local.yml', ...creds }, { cwd, node: n24.bin });
    expect(r.code, r.stdout).toBe(0);
    expect((JSON.parse(r.outputs.result!) as ActionResult).images).toEqual([expect.objectContaining({ format: 'QCOW2', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
  });

  it('an empty url is an error that says so (an unset variable must not switch to a local build)', async () => {
    const cwd = workspace();
    const r = await runAction({ file: 'local.yml', url: '' }, { cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("::error::input url is empty: give the service's URL, or embedded to build with the embedded reference server inside this step");
    expect(existsSync(path.join(cwd, '.appliance-forge'))).toBe(false);
  });

  it('an empty url with a user or credential input names them', async () => {
    const cwd = workspace();
    const r = await runAction({ file: 'local.yml', url: '', user: 'alice', 'secret-key': 'not-shown-secret-1' }, { cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("::error::no service URL: input user and input secret-key are given, but no URL; give input url (the service's URL), or url: embedded for the embedded server");
    expect(unmasked(r.stdout)).not.toContain('not-shown-secret-1');
  });

  it('boolean inputs read as core.getBooleanInput does: YAML 1.2 true/false in three cases, anything else fails naming the input', async () => {
    const cwd = workspace();
    writeFileSync(path.join(cwd, 'typo.yml'), readFileSync(path.join(cwd, 'local.yml'), 'utf8').replace("  version: '1.0'\n", "  version: '1.0'\n  versoin: 2\n"));
    for (const [name, value, mode] of [['strict', 'yes', 'validate'], ['allow-outside-sources', 'on', 'validate'], ['publish', 'no', 'plan']] as const) {
      const r = await runAction({ file: 'typo.yml', mode, ...creds, [name]: value }, { cwd });
      expect(r.code, r.stdout).toBe(1);
      expect(r.stdout).toContain(`::error::input ${name} must be true or false (YAML 1.2: true, True, TRUE, false, False or FALSE), not "${value}"`);
      expect(r.outputs).toEqual({});
    }
    const strict = await runAction({ file: 'typo.yml', mode: 'validate', strict: 'TRUE' }, { cwd });
    expect(strict.code).toBe(1);
    expect(JSON.parse(strict.outputs.result!)).toMatchObject({ ok: false, target: null, errors: 1 });
    const lax = await runAction({ file: 'typo.yml', mode: 'validate', strict: 'False' }, { cwd });
    expect(lax.code, lax.stdout).toBe(0);
    // publish false: the publication fields and accounts are not read, so their variables need not be set.
    const plan = await runAction({ file: 'appliance.yml', mode: 'plan', ...creds, publish: 'false' }, { cwd });
    expect(plan.code, plan.stdout).toBe(0);
    expect((JSON.parse(plan.outputs.result!) as ActionResult).summary).toMatchObject({ publish: 0, generate: 2 });
  });

  it('masks only the values of fields the model marks secret, not every ${env:…} value', async () => {
    const cwd = workspace();
    writeFileSync(path.join(cwd, 'pub.yml'), readFileSync(path.join(cwd, 'local.yml'), 'utf8').replace('builders:\n', [
      'builders:',
      '  - type: OpenStack QCOW2',
      '    account: {type: OpenStack, name: lab, keystoneUrl: "${env:AF_KEYSTONE}", login: "${env:AF_LOGIN}", password: "${env:AF_PASSWORD}"}',
      '    displayName: pub-1.0',
      '    keystoneDomain: ${env:AF_DOMAIN}',
      '    keystoneProject: ${env:AF_PROJECT}',
      '',
    ].join('\n')));
    const env = { AF_KEYSTONE: 'http://127.0.0.1:9/v3', AF_LOGIN: 'forge-login', AF_PASSWORD: 'keystone-password-1', AF_DOMAIN: 'Default', AF_PROJECT: 'forge-project' };
    const r = await runAction({ file: 'pub.yml', mode: 'plan', ...creds }, { cwd, env });
    expect(r.code, r.stdout).toBe(0);
    const masks = r.stdout.split('\n').filter((l) => l.startsWith('::add-mask::')).map((l) => l.slice('::add-mask::'.length));
    // The service's secret key and the two passwords (the account's, and local.yml's root password, written in the file).
    expect(masks.sort()).toEqual([svc.secretKey, 'keystone-password-1', 'forge-demo'].sort());
    expect(unmasked(r.stdout) + JSON.stringify(r.outputs) + r.summary).not.toContain('keystone-password-1');
  });

  it('builders selects by index or type (plan, embedded server); a selector that matches nothing names the builders', async () => {
    const cwd = tempDir('af-gha-ws-');
    execFileSync('cp', [path.join(root, 'examples/matrix.yml'), cwd]);
    const picked = async (builders: string) => {
      const r = await runAction({ file: 'matrix.yml', url: 'embedded', mode: 'plan', builders }, { cwd });
      expect(r.code, r.stdout).toBe(0);
      return (JSON.parse(r.outputs.result!) as ActionResult).images.map((i) => [i.builder, i.format]);
    };
    expect(await picked('')).toEqual([[0, 'QCOW2'], [1, 'VHD']]);
    const all = await runAction({ file: 'matrix.yml', url: 'embedded', mode: 'plan' }, { cwd });
    expect([all.outputs.target, (JSON.parse(all.outputs.result!) as ActionResult).target]).toEqual(['embedded', 'embedded']);
    // The version of the package, which the bundle carries (it runs with no package.json above it).
    const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    const alone = tempDir('af-gha-alone-');
    execFileSync('cp', ['-r', path.join(root, 'action'), alone]);
    const r = await runAction({ file: 'matrix.yml', url: 'embedded', mode: 'plan' }, { cwd, bundle: path.join(alone, 'action/dist/index.js'), ...(n24.bin ? { node: n24.bin } : {}) });
    if (n24.bin) expect(r.stdout).toContain(`url embedded: using the embedded reference server ${version} (data in ${path.join(runnerTemp(cwd), 'appliance-forge')})`);
    // Node 20 has no node:sqlite, and the folder alone no better-sqlite3: the step says so.
    else expect(r.stdout).toContain('::error::no SQLite engine: Node 20.');
    expect(await picked('1')).toEqual([[1, 'VHD']]);
    expect(await picked('qcow2')).toEqual([[0, 'QCOW2']]);
    expect(await picked('VHD,\n 0')).toEqual([[0, 'QCOW2'], [1, 'VHD']]);
    const bad = await runAction({ file: 'matrix.yml', url: 'embedded', mode: 'plan', builders: '0,2' }, { cwd });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('::error::input builders: no builder is "2" (the declaration\'s builders, by index and type: 0 QCOW2, 1 VHD)');
  });

  it('vars and var-files feed ${var:NAME} (vars win over the files); an unset one is named; validate takes them too', async () => {
    const cwd = tempDir('af-gha-ws-');
    // The second builder's type comes from a variable; its value may be masked in the log, so its effect is checked.
    writeFileSync(path.join(cwd, 'matrix.yml'), readFileSync(path.join(root, 'examples/matrix.yml'), 'utf8').replace('  - type: VHD', '  - type: ${var:SECOND}'));
    writeFileSync(path.join(cwd, 'a.yml'), 'SECOND: VHD\n');
    writeFileSync(path.join(cwd, 'b.json'), '{"SECOND": "QCOW3"}');
    const plan = (inputs: Record<string, string>) => runAction({ file: 'matrix.yml', url: 'embedded', mode: 'plan', ...inputs }, { cwd });
    const unset = await plan({});
    expect(unset.code).toBe(1);
    expect(unset.stdout).toMatch(/::error file=matrix\.yml,line=13,col=\d+::builders\[1\]\.type: variable SECOND is not set/);
    const files = await plan({ 'var-files': 'a.yml\n' });
    expect(files.code, files.stdout).toBe(0);
    expect((JSON.parse(files.outputs.result!) as ActionResult).images.map((i) => i.builder)).toEqual([0, 1]);
    // The later file names a format the service does not have: the step fails; a vars line wins over both files.
    expect((await plan({ 'var-files': 'a.yml\nb.json' })).code).toBe(1);
    expect((await plan({ 'var-files': 'a.yml\nb.json', vars: 'OTHER=x\nSECOND=VHD\n' })).code).toBe(0);
    const bad = await plan({ vars: 'SECOND' });
    expect(bad.stdout).toContain('::error::input vars: takes NAME=VALUE');
    const validate = await runAction({ file: 'matrix.yml', mode: 'validate', vars: 'SECOND=VHD' }, { cwd });
    expect(JSON.parse(validate.outputs.result!)).toMatchObject({ mode: 'validate', ok: true, warnings: 0, vars: ['SECOND'] });
  });

  it('url embedded keeps its data under RUNNER_TEMP: a data folder committed in the workspace is never opened', async () => {
    const cwd = tempDir('af-gha-ws-');
    execFileSync('cp', [path.join(root, 'examples/matrix.yml'), cwd]);
    // A fork's pull request can commit this: a link whose target the start-up sweep would empty.
    const canary = tempDir('af-gha-canary-');
    writeFileSync(path.join(canary, 'keep-me.txt'), 'still here\n');
    mkdirSync(path.join(cwd, '.appliance-forge'));
    symlinkSync(canary, path.join(cwd, '.appliance-forge/tmp'));
    const r = await runAction({ file: 'matrix.yml', url: 'embedded', mode: 'plan' }, { cwd });
    expect(r.code, r.stdout).toBe(0);
    const data = path.join(runnerTemp(cwd), 'appliance-forge');
    expect(r.stdout).toContain(`(data in ${data})`);
    expect(readdirSync(data)).toEqual(expect.arrayContaining(['forge.db', 'secret.key', 'credentials.json', 'tmp']));
    expect(readdirSync(path.join(cwd, '.appliance-forge'))).toEqual(['tmp']);
    expect(readdirSync(canary)).toEqual(['keep-me.txt']);
  });

  it('a bundle source outside the declaration folder fails the step, annotated, unless allow-outside-sources is true', async () => {
    const cwd = workspace();
    writeFileSync(path.join(path.dirname(cwd), `${path.basename(cwd)}-outside.txt`), 'not the declaration\'s\n');
    writeFileSync(path.join(cwd, 'out.yml'), readFileSync(path.join(cwd, 'local.yml'), 'utf8').replace('source: files/site.conf', `source: ../${path.basename(cwd)}-outside.txt`));
    for (const mode of ['validate', 'plan']) {
      const bad = await runAction({ file: 'out.yml', url: 'embedded', mode }, { cwd });
      expect(bad.code, bad.stdout).toBe(1);
      expect(bad.stdout).toMatch(/::error file=out\.yml,line=\d+,col=\d+::bundle source \.\.\/\S+-outside\.txt is outside the declaration's folder.*allow-outside-sources: true/);
    }
    const ok = await runAction({ file: 'out.yml', mode: 'validate', 'allow-outside-sources': 'true' }, { cwd });
    expect(ok.code, ok.stdout).toBe(0);
  });

  it('every workflow (examples, .github) sets permissions and concurrency; CI checks the bundle and runs ./action embedded', () => {
    const files = [
      ...readdirSync(path.join(root, 'examples')).filter((n) => n.includes('workflow')).map((n) => path.join('examples', n)),
      ...readdirSync(path.join(root, '.github/workflows')).map((n) => path.join('.github/workflows', n)),
    ];
    expect(files).toEqual(expect.arrayContaining(['examples/workflow.yml', 'examples/matrix-workflow.yml', '.github/workflows/ci.yml']));
    for (const f of files) {
      const wf = parse(readFileSync(path.join(root, f), 'utf8')) as { permissions?: unknown; concurrency?: unknown };
      expect(wf.permissions, f).toEqual({ contents: 'read' });
      expect(wf.concurrency, f).toMatchObject({ group: expect.any(String) });
    }
    const ci = parse(readFileSync(path.join(root, '.github/workflows/ci.yml'), 'utf8')) as { jobs: Record<string, { steps: Array<{ uses?: string; run?: string; with?: Record<string, string> }> }> };
    const steps = Object.values(ci.jobs).flatMap((j) => j.steps);
    expect(steps.map((x) => x.run)).toContain('npm run check:action');
    expect(steps.find((x) => x.uses === './action')?.with).toMatchObject({ url: 'embedded' });
  });

  it('examples/provenance-workflow.yml attests the files the Action lists in subject-checksums, from a job that alone may sign', () => {
    const wf = parse(readFileSync(path.join(root, 'examples/provenance-workflow.yml'), 'utf8')) as {
      jobs: Record<string, { permissions: Record<string, string>; steps: Array<{ id?: string; uses?: string; with?: Record<string, string> }> }>;
    };
    const job = wf.jobs.build!;
    expect(job.permissions).toEqual({ contents: 'read', 'id-token': 'write', attestations: 'write' });
    const forge = job.steps.find((x) => x.uses === 'appliance-forge/appliance-forge/action@v1')!;
    expect(forge.with).toMatchObject({ url: 'embedded', 'output-dir': 'images' });
    const attest = job.steps.findIndex((x) => x.uses === 'actions/attest-build-provenance@v2');
    expect(attest).toBeGreaterThan(job.steps.indexOf(forge));
    expect(job.steps[attest]!.with).toEqual({ 'subject-checksums': `\${{ steps.${forge.id!}.outputs.subject-checksums }}` });
  });

  it('url embedded as a user who cannot sudo: a clear error before anything is written', async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip('not root: cannot run the step as another user');
    // The runner's user without passwordless sudo (nobody here): builds need root, so the step says how to get it.
    const alone = tempDir('af-gha-alone-');
    execFileSync('cp', ['-r', path.join(root, 'action'), alone]);
    const cwd = tempDir('af-gha-ws-');
    execFileSync('cp', [path.join(root, 'examples/matrix.yml'), cwd]);
    execFileSync('chmod', ['-R', 'a+rX', alone, cwd]);
    // The run's temporary root (test/support/temp-root.ts) is mkdtemp's 0700: let nobody pass through it.
    execFileSync('chmod', ['a+x', path.dirname(alone), path.dirname(cwd)]);
    const r = await runAction({ file: 'matrix.yml', url: 'embedded' }, { cwd, node: 'setpriv', bundle: path.join(alone, 'action/dist/index.js'), args: ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath] });
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toContain("::error::url embedded builds images in the runner user's namespace or as root: this runner's user has no subordinate id range (or lacks the image tools) and cannot use sudo without a password");
    expect(existsSync(path.join(cwd, '.appliance-forge'))).toBe(false);
  });

  // The Action as a runner has it: only the action/ folder (no package.json, no node_modules above
  // it), Node 24, url embedded: the bundle's own server builds real images (warm OS layer cache).
  // examples/matrix-workflow.yml run by hand: one job per matrix value, each in its own workspace
  // (its own runner), then its collect job's script on the artifacts merged as download-artifact does.
  it('examples/matrix-workflow.yml from the action folder alone under Node 24: one builder per job, then the collect job', async () => {
    if (!n24.bin) return void console.warn(`SKIP the action folder under Node 24: ${n24.reason}`);
    const wf = parse(readFileSync(path.join(root, 'examples/matrix-workflow.yml'), 'utf8')) as {
      jobs: Record<string, { strategy?: { matrix: { builder: string[] } }; steps: Array<{ id?: string; name?: string; uses?: string; with?: Record<string, string>; env?: Record<string, string>; run?: string }> }>;
    };
    const build = wf.jobs.build!;
    const forge = build.steps.find((x) => x.id === 'forge')!;
    const keep = build.steps.find((x) => x.name === 'Keep the result')!;
    const merge = wf.jobs.collect!.steps.find((x) => x.name === 'Merge the results')!;
    expect(forge.uses).toMatch(/\/action@v1$/);
    expect(forge.with).toMatchObject({ url: 'embedded', builders: '${{ matrix.builder }}', 'output-dir': 'images' });
    const alone = tempDir('af-gha-alone-');
    execFileSync('cp', ['-r', path.join(root, 'action'), alone]);
    const collected = tempDir('af-gha-collect-');
    mkdirSync(path.join(collected, 'images'));
    const bash = (script: string, cwd: string, env: Record<string, string>) =>
      execFileSync('bash', ['-eo', 'pipefail', '-c', script], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
    for (const builder of build.strategy!.matrix.builder) {
      const cwd = tempDir('af-gha-ws-');
      execFileSync('cp', ['-r', path.join(root, 'examples'), cwd]);
      const inputs = Object.fromEntries(Object.entries(forge.with!).map(([k, v]) => [k, String(v).replace('${{ matrix.builder }}', builder)]));
      const r = await runAction(inputs, { cwd, node: n24.bin, bundle: path.join(alone, 'action/dist/index.js') });
      expect(r.code, r.stdout).toBe(0);
      expect(r.stdout).toContain('url embedded: using the embedded reference server');
      const result = JSON.parse(r.outputs.result!) as ActionResult;
      expect(result.images).toEqual([expect.objectContaining({ builder: Number(builder), action: 'generate', file: r.outputs['image-files'] })]);
      const file = result.images[0]!.file!;
      expect(path.dirname(file)).toBe(path.join(cwd, 'images'));
      // Checked by tools that are not ours: the digest, and the format of the file written.
      expect(execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0]).toBe(result.images[0]!.sha256);
      // A fixed VHD is the raw disk and a footer, which qemu-img's probe takes for raw: read it as the format it
      // should be, and for a VHD check the footer's cookie at the end of the file.
      const expected = { QCOW2: 'qcow2', VHD: 'vpc' }[result.images[0]!.format]!;
      const format = (JSON.parse(execFileSync('qemu-img', ['info', '-f', expected, '--output=json', file], { encoding: 'utf8' })) as { format: string }).format;
      expect(format).toBe(expected);
      if (expected === 'vpc') expect(execFileSync('bash', ['-c', 'tail -c 512 "$1" | head -c 8', '-', file], { encoding: 'utf8' })).toBe('conectix');
      const saved = JSON.parse(readFileSync(path.join(runnerTemp(cwd), 'appliance-forge/credentials.json'), 'utf8')) as { secretKey: string };
      expect(r.stdout).toContain(`::add-mask::${saved.secretKey}`);
      expect(unmasked(r.stdout) + JSON.stringify(r.outputs) + r.summary).not.toContain(saved.secretKey);
      bash(keep.run!.replace('${{ matrix.builder }}', builder), cwd, { RESULT: r.outputs.result! });
      // upload-artifact of images/, then download-artifact with merge-multiple: one folder.
      execFileSync('cp', ['-r', `${path.join(cwd, 'images')}/.`, path.join(collected, 'images')]);
    }
    const summary = path.join(collected, 'summary');
    writeFileSync(summary, '');
    bash(merge.run!, collected, { GITHUB_STEP_SUMMARY: summary });
    const merged = JSON.parse(readFileSync(path.join(collected, 'images/result.json'), 'utf8')) as { changes: boolean; images: ActionResult['images'] };
    expect(merged.changes).toBe(true);
    expect(merged.images.map((i) => [i.builder, i.format])).toEqual([[0, 'QCOW2'], [1, 'VHD']]);
    expect(readFileSync(summary, 'utf8')).toMatch(/\| 1 \| VHD \| example-matrix-1\.0\.vhd \| [0-9a-f]{64} \|/);
  });
});
