// What a run prints besides its result, through the real command line against the real reference
// server: `--json` streams the progress on stderr as JSON Lines while stdout keeps the one document,
// `--log-file` writes the whole run (events, request trace) without a secret, and text output ends
// with terraform's closing line (`Plan: …`, `No changes. …`, `Apply complete! …`).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MASK } from '../../src/engine';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, runCli } from './helpers/cli';

interface Rec { type: string; time: string; [k: string]: unknown }

function records(jsonl: string): Rec[] {
  return jsonl.trim().split('\n').map((l) => JSON.parse(l) as Rec);
}

describe('progress as JSON Lines, the log file, the closing line', () => {
  let svc: TestService;
  let env: Record<string, string>;
  const rootPassword = 'root-password-from-env-1';
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
    env = { APPLIANCE_FORGE_URL: svc.server.url, APPLIANCE_FORGE_USER: svc.login, APPLIANCE_FORGE_API_KEY: svc.publicKey, ROOT_PW: rootPassword };
  });
  afterAll(async () => svc?.close());

  it('apply --json: progress on stderr, the document on stdout; --log-file holds it all and no secret; then the closing lines', async () => {
    const dir = examplesWorkspace();
    // A secret from the environment in the declaration, and the secret key on the command line.
    const f = path.join(dir, 'local.yml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('password: forge-demo', 'password: ${env:ROOT_PW}'));
    const secretFlag = ['--secret-key', svc.secretKey];

    const plan = await runCli(['plan', 'local.yml', ...secretFlag], { cwd: dir, env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/\n\nPlan: 8 to create, 0 to update, 0 to delete\.\n$/);

    const apply = await runCli(['apply', 'local.yml', '--json', '--log-file', 'run.log', ...secretFlag], { cwd: dir, env });
    expect(apply.code, apply.stderr).toBe(0);
    expect(JSON.parse(apply.stdout)).toMatchObject({ ok: true, mode: 'apply' });
    const events = records(apply.stderr);
    for (const e of events) expect(Date.parse(e.time), JSON.stringify(e)).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['phase', 'step', 'progress', 'done']));
    expect(events).toContainEqual(expect.objectContaining({ type: 'phase', phase: 'images', message: 'Images and publications' }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'step', message: 'uploaded example-site/index.html' }));
    const generation = events.filter((e) => e.resource === events.find((x) => x.type === 'done' && x.label === 'generate QCOW2')?.resource);
    expect(generation.at(-1)).toMatchObject({ type: 'done', label: 'generate QCOW2', ok: true });
    expect(generation.filter((e) => e.type === 'progress').length).toBeGreaterThan(0);
    for (const p of events.filter((e) => e.type === 'progress')) expect(p).toMatchObject({ resource: expect.any(String), label: expect.any(String), percentage: expect.any(Number) });

    const log = records(readFileSync(path.join(dir, 'run.log'), 'utf8'));
    expect(log[0]).toMatchObject({ type: 'log', level: 'info', message: expect.stringMatching(/^appliance-forge \S+ apply local\.yml --json --log-file run\.log --secret-key \*+ \(node /) });
    expect(log.filter((r) => r.level === 'debug').map((r) => r.message)).toContainEqual(expect.stringMatching(/^POST \/api\/\S+ 20\d \d+ms$/));
    expect(log.filter((r) => r.type === 'done')).toEqual(events.filter((e) => e.type === 'done').map((e) => ({ ...e, time: expect.any(String) })));
    expect(log.at(-1)).toMatchObject({ type: 'log', level: 'info', message: expect.stringMatching(/^\{"ok":true,"mode":"apply"/) });
    const text = readFileSync(path.join(dir, 'run.log'), 'utf8');
    for (const secret of [svc.secretKey, rootPassword]) expect(text).not.toContain(secret);
    expect(text).toContain(MASK);

    const again = await runCli(['apply', 'local.yml', ...secretFlag], { cwd: dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/\n\nApply complete! Resources: 0 created, 0 updated, 0 deleted\.\n$/);
    const none = await runCli(['plan', 'local.yml', ...secretFlag], { cwd: dir, env });
    expect(none.stdout).toMatch(/\n\nNo changes\. The service matches the declaration\.\n$/);
    // JSON output has no closing line; --quiet silences the events.
    const quiet = await runCli(['plan', 'local.yml', '--json', '-q', ...secretFlag], { cwd: dir, env });
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).not.toContain('No changes');
    // Appended: a second run adds to the log.
    await runCli(['plan', 'local.yml', '--log-file', 'run.log', ...secretFlag], { cwd: dir, env });
    expect(records(readFileSync(path.join(dir, 'run.log'), 'utf8')).length).toBeGreaterThan(log.length);
    const unwritable = await runCli(['plan', 'local.yml', '--log-file', 'no-such-folder/run.log'], { cwd: dir, env });
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toBe('appliance-forge plan: --log-file no-such-folder/run.log: no such file or folder\n');
  });
});
