// plan and apply run validate's offline checks (the model's closed lists, time zones) before
// any request, through the real command line against the reference server on 127.0.0.1: a time zone that
// validate refuses fails plan (exit 2, file:line:column) and apply before anything is uploaded or created.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { cliBundle, connectionEnv, runCli } from './helpers/cli';

describe('plan and apply check what validate checks, before any write', () => {
  let svc: TestService;
  let creds: Record<string, string>;
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
    creds = connectionEnv(svc.server.url, svc);
  });
  afterAll(async () => svc?.close());

  it('a misspelled time zone fails validate, plan and apply alike, naming file:line; apply uploads nothing', async () => {
    const dir = examplesWorkspace();
    const text = readFileSync(path.join(dir, 'local.yml'), 'utf8');
    const line = text.split('\n').findIndex((l) => l.includes('timezone: Etc/UTC')) + 1;
    writeFileSync(path.join(dir, 'tz.yml'), text.replace('timezone: Etc/UTC', 'timezone: Europe/Pariss'));
    const problem = `tz.yml:${line}:15: error: stack.installation.timezone "Europe/Pariss" is not an IANA time zone name (e.g. Europe/Paris, Etc/UTC)`;

    const validate = await runCli(['validate', 'tz.yml'], { cwd: dir });
    expect(validate.stderr).toContain(problem);

    const plan = await runCli(['plan', 'tz.yml'], { cwd: dir, env: creds });
    expect(plan.code, plan.stdout).toBe(2);
    expect(plan.stderr).toContain(problem);
    expect(plan.stdout).not.toContain('to create');

    const json = await runCli(['plan', 'tz.yml', '--json'], { cwd: dir, env: creds });
    expect(json.code).toBe(2);
    const doc = JSON.parse(json.stdout) as { ok: boolean; error: { problems: Array<{ line: number; message: string }> } };
    expect(doc.ok).toBe(false);
    expect(doc.error.problems).toEqual([expect.objectContaining({ line, message: expect.stringContaining('"Europe/Pariss" is not an IANA time zone name') })]);

    const apply = await runCli(['apply', 'tz.yml'], { cwd: dir, env: creds });
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain(problem);
    const client = createClient({ url: svc.server.url, auth: { login: svc.login, publicKey: svc.publicKey, secretKey: svc.secretKey } });
    try {
      expect((await client.mySoftware_getAll({})).mySoftwareList ?? []).toEqual([]);
      expect((await client.appliance_getAll({})).appliances ?? []).toEqual([]);
    } finally {
      await client.close();
    }
  }, 300_000);
});
