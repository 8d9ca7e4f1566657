// The whole lifecycle through the real command line (a child process) against the real reference server
// over HTTP on 127.0.0.1: apply --prune removes superseded images (and, where the real loopback Keystone +
// Glance run, their publications from Glance), list and show read what the user holds, destroy removes what
// the declaration made after a yes on a terminal or --auto-approve, and leaves what it did not make.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplesWorkspace, startTestService, type TestService } from '../engine/helpers/service';
import { imagesNamed, openStackServices } from '../support/openstack';
import { cliBundle, runCli, runCliOnTerminal } from './helpers/cli';

const os = openStackServices();
if (!os.env) console.warn(`lifecycle without publications: ${os.skip ?? 'no OpenStack'}`);

interface Change { kind: string; name: string; action: string; before: { uri?: string } | null; reason?: string }
interface Doc { ok: boolean; summary: { changes: boolean; remove: number; keep?: number }; changes: Change[] }
interface ApplyDoc extends Doc {
  result: { images: Array<{ imageUri: string; publication?: { uri: string; cloudId?: string } }>; removed: Array<{ kind: string; uri: string; outcome: string }> };
}
interface Item { kind: string; uri: string; name: string; state: string }

const deletes = (d: Doc) => d.changes.filter((c) => c.action === 'delete').map((c) => [c.kind, c.before?.uri]);
const json = <T>(text: string): T => JSON.parse(text) as T;

describe('apply --prune, list, show and destroy', () => {
  let svc: TestService;
  let env: Record<string, string>;
  let dir: string;
  // With Glance: appliance.yml (a QCOW2 image and a published OpenStack QCOW2 one), under a display name of
  // this run only (other suites publish to the same Glance); without: local.yml.
  const file = os.env ? 'appliance.yml' : 'local.yml';
  const displayName = `lifecycle-${randomBytes(4).toString('hex')}`;
  const glance = async () => (os.env ? (await imagesNamed(os.env, displayName)).map(([id]) => id) : []);
  beforeAll(async () => {
    cliBundle();
    svc = await startTestService();
    env = { APPLIANCE_FORGE_URL: svc.server.url, APPLIANCE_FORGE_USER: svc.login, APPLIANCE_FORGE_API_KEY: svc.publicKey, APPLIANCE_FORGE_SECRET_KEY: svc.secretKey, ...os.vars };
    dir = examplesWorkspace('af-lifecycle-');
    const f = path.join(dir, file);
    writeFileSync(f, readFileSync(f, 'utf8').replace('displayName: example-web-1.0', `displayName: ${displayName}`));
  });
  afterAll(async () => svc?.close());

  const cli = (...args: string[]) => runCli(args, { cwd: dir, env });
  const edit = (from: string, to: string) => {
    const f = path.join(dir, file);
    writeFileSync(f, readFileSync(f, 'utf8').replace(from, to));
  };
  const listed = async () => json<{ items: Item[] }>((await cli('list', '--json')).stdout).items;

  it('apply --prune removes the images of the old revision and their publications; without --prune they stay', async () => {
    const first = await cli('apply', file, '--json');
    expect(first.code, first.stderr).toBe(0);
    const old = json<ApplyDoc>(first.stdout).result.images;
    const oldImages = old.map((i) => i.imageUri);
    const oldPubs = old.flatMap((i) => (i.publication ? [i.publication] : []));
    expect(oldPubs).toHaveLength(os.env ? 1 : 0);
    expect(await glance()).toEqual(oldPubs.map((p) => p.cloudId));

    edit('description: nginx serving a static page', 'description: nginx serving a static page, second edition');
    const plain = await cli('plan', file, '--json');
    expect(plain.code, plain.stderr).toBe(0);
    expect(deletes(json<Doc>(plain.stdout))).toEqual([]);
    const planned = await cli('plan', file, '--prune', '--json');
    expect(planned.code, planned.stderr).toBe(0);
    const want = [...oldImages.map((u) => ['image', u]), ...oldPubs.map((p) => ['publication', p.uri])];
    expect(deletes(json<Doc>(planned.stdout)).sort()).toEqual(want.sort());
    expect(json<Doc>(planned.stdout).summary.remove).toBe(want.length);
    const text = await cli('plan', file, '--prune');
    expect(text.stdout).toContain(`- image QCOW2: delete (${oldImages[0]}) — superseded: the appliance changes (image of revision`);
    expect(text.stdout).toMatch(new RegExp(`Plan: \\d+ to create, 1 to update, ${want.length} to delete\\.`));

    const second = await cli('apply', file, '--prune', '--json');
    expect(second.code, second.stderr).toBe(0);
    const doc = json<ApplyDoc>(second.stdout);
    expect(doc.result.removed.map((r) => [r.kind, r.uri]).sort()).toEqual(want.sort());
    expect(doc.result.removed.every((r) => r.outcome === 'removed')).toBe(true);
    const now = doc.result.images.map((i) => i.imageUri);
    expect((await listed()).filter((i) => i.kind === 'image').map((i) => i.uri).sort()).toEqual([...now].sort());
    // Glance keeps only the new publication's image.
    expect(await glance()).toEqual(doc.result.images.flatMap((i) => (i.publication ? [i.publication.cloudId] : [])));
    // Converged, nothing superseded: --prune plans nothing more.
    const again = await cli('plan', file, '--prune', '--json');
    expect(json<Doc>(again.stdout).summary).toMatchObject({ changes: false, remove: 0 });
  });

  it('--prune keeps a running image of a format no builder of the run makes; a cancelled one goes', async () => {
    const c = svc.client();
    const app = (await c.appliance_getAll({ params: { query: "name=='example-web'" } })).appliances![0]!;
    const aid = app.uri!.split('/').pop()!;
    // Another job's builder (a matrix): same appliance, same revision, a format this file does not build.
    const other = await c.machineImage_generate({ aid, body: { targetFormat: { name: 'Raw Virtual Disk' }, installProfile: { diskSize: 2048 } } });
    const running = await cli('plan', file, '--prune', '--json');
    expect(deletes(json<Doc>(running.stdout))).toEqual([]);
    await c.machineImageGeneration_cancel({ aid, itid: other.uri!.split('/').pop()! });
    const cancelled = json<Doc>((await cli('plan', file, '--prune', '--json')).stdout);
    expect(cancelled.changes.filter((x) => x.action === 'delete')).toEqual([
      expect.objectContaining({ kind: 'image', name: 'Raw Virtual Disk', before: expect.objectContaining({ uri: other.uri }), reason: 'cancelled generation' }),
    ]);
    const pruned = await cli('apply', file, '--prune');
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(new RegExp(`image\\s+removed\\s+Raw Virtual Disk ${other.uri}`));
  });

  it('list and show read what the user holds', async () => {
    const items = await listed();
    expect(items.map((i) => i.kind).sort()).toEqual(['appliance', 'image', 'software', ...(os.env ? ['image', 'publication'] : [])].sort());
    const image = items.find((i) => i.kind === 'image' && i.name === 'QCOW2')!;
    expect(image.state).toBe('complete');
    const table = await cli('list');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^KIND\s+URI\s+NAME\s+STATE\s+DETAIL$/);
    expect(table.stdout).toMatch(new RegExp(`image\\s+${image.uri}\\s+QCOW2\\s+complete\\s+example-web 1.0 revision \\d+, [\\d.]+ MiB`));
    const only = json<{ target: string; items: Item[] }>((await cli('list', 'appliances', '--json')).stdout);
    expect(only.target).toBe(svc.server.url);
    expect(only.items.map((i) => [i.kind, i.name])).toEqual([['appliance', 'example-web 1.0']]);
    // The target rules of plan: a credential without a URL is a usage error, never the embedded server.
    const noUrl = await runCli(['list'], { cwd: dir, env: { APPLIANCE_FORGE_USER: svc.login, APPLIANCE_FORGE_PASSWORD: 'x' } });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('no service URL');

    const shown = await cli('show', 'image', image.uri, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    expect(json<{ record: { sha256sum: string; uri: string } }>(shown.stdout).record).toMatchObject({ uri: image.uri, sha256sum: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const app = items.find((i) => i.kind === 'appliance')!;
    const byNumber = await cli('show', 'appliance', app.uri.split('/').pop()!);
    expect(byNumber.code, byNumber.stderr).toBe(0);
    expect(byNumber.stdout).toMatch(/^name: example-web$/m);
    if (os.env) {
      const pub = items.find((i) => i.kind === 'publication')!;
      const p = await cli('show', 'publication', pub.uri, '--json');
      const rec = json<{ record: { credAccount: Record<string, unknown> } }>(p.stdout).record;
      expect(rec.credAccount).not.toHaveProperty('password');
      expect(p.stdout).not.toContain(os.env.admin.password);
    }
    const bad = await cli('show', 'image', '7');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('image "7": give its URI (users/<uid>/appliances/<aid>/images/<itid>, as list prints it)');
    const gone = await cli('show', 'image', `${app.uri}/images/999999`);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/show failed: the service answered .*404/);
  });

  it('destroy shows the removals, asks on a terminal, refuses without one, and removes it all', async () => {
    const before = await listed();
    const noTerminal = await cli('destroy', file);
    expect(noTerminal.code).toBe(2);
    expect(noTerminal.stderr).toContain('without a terminal there is no one to confirm the removals: add --auto-approve');
    const jsonNoApprove = await cli('destroy', file, '--json');
    expect(jsonNoApprove.code).toBe(2);

    const dry = await cli('destroy', file, '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    const plan = json<Doc>(dry.stdout);
    // Publications, images, the appliance, then its software: the order of the removals.
    expect(plan.changes.map((c) => [c.kind, c.action])).toEqual([
      ...before.filter((i) => i.kind === 'publication').map(() => ['publication', 'delete']),
      ...before.filter((i) => i.kind === 'image').map(() => ['image', 'delete']),
      ['appliance', 'delete'], ['software', 'delete'],
    ]);
    expect(plan.summary).toEqual({ changes: true, remove: before.length, keep: 0 });
    expect(json<{ target: string }>(dry.stdout).target).toBe(svc.server.url);

    const declined = await runCliOnTerminal(['destroy', file], { cwd: dir, env, input: 'no\n' });
    expect(declined.code, declined.stdout).toBe(1);
    expect(declined.stdout).toContain(`- appliance example-web 1.0: delete`);
    expect(declined.stdout).toMatch(/Remove these \d+ objects of example-web 1\.0 from http:\/\/127\.0\.0\.1:\d+\/api\? Only 'yes' is accepted/);
    expect(declined.stdout).toContain('destroy declined: nothing was removed');
    expect(await listed()).toEqual(before);

    const confirmed = await runCliOnTerminal(['destroy', file], { cwd: dir, env, input: 'yes\n' });
    expect(confirmed.code, confirmed.stdout).toBe(0);
    expect(confirmed.stdout).toContain(`Destroy complete! Resources: ${before.length} destroyed.`);
    expect(await listed()).toEqual([]);
    expect(await glance()).toEqual([]);

    // destroy publishes nothing, so it reads no publication variable (appliance.yml's OS_* are unset here).
    const connectionOnly = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('APPLIANCE_FORGE_')));
    const nothing = await runCli(['destroy', file, '--auto-approve'], { cwd: dir, env: connectionOnly });
    expect(nothing.code, nothing.stderr).toBe(0);
    expect(nothing.stdout).toContain('No changes. Nothing of example-web 1.0 to remove.');
    for (const r of [noTerminal, dry, declined, confirmed]) expect(r.stdout + r.stderr).not.toContain(svc.secretKey);
  });

  it('destroy leaves an appliance an apply did not write and a component another appliance uses', async () => {
    const c = svc.client();
    const dist = (await c.os_getAll({})).distributions!.find((d) => d.name === 'Debian' && d.version === '12')!;
    const mk = async (name: string) => c.mySoftware_create({ body: { name, version: '1.0' } });
    const [shared, solo] = [await mk('shared'), await mk('solo')];
    // Made by hand (no tag of the engine), under the declaration's name and version.
    const hand = await c.appliance_create({ body: { name: 'hand-made', version: '1', distributionUri: dist.uri!, mySoftwareList: [{ name: 'shared', version: '1.0', uri: shared.uri! }] } });
    const other = await c.appliance_create({ body: { name: 'other', version: '2', distributionUri: dist.uri!, mySoftwareList: [{ name: 'shared', version: '1.0', uri: shared.uri! }] } });
    const ws = mkdtempSync(path.join(tmpdir(), 'af-lifecycle-hand-'));
    writeFileSync(path.join(ws, 'f.txt'), 'x\n');
    const bundle = (name: string) => `    - name: ${name}\n      version: '1.0'\n      files:\n        - name: f.txt\n          source: f.txt\n`;
    writeFileSync(path.join(ws, 'hand.yml'), `stack:\n  name: hand-made\n  version: '1'\n  os: {name: Debian, version: '12'}\n  bundles:\n${bundle('shared')}${bundle('solo')}builders:\n  - type: QCOW2\n`);
    const r = await runCli(['destroy', 'hand.yml', '--auto-approve', '--json'], { cwd: ws, env });
    expect(r.code, r.stderr).toBe(0);
    const doc = json<Doc & { removed: Array<{ kind: string; uri: string }> }>(r.stdout);
    expect(doc.changes.map((x) => [x.kind, x.action, x.before?.uri])).toEqual([
      ['software', 'delete', solo.uri], ['appliance', 'unchanged', hand.uri], ['software', 'unchanged', shared.uri],
    ]);
    expect(doc.changes.find((x) => x.kind === 'appliance')!.reason).toContain('not made by appliance-forge');
    expect(doc.changes.find((x) => x.before?.uri === shared.uri)!.reason).toBe(`used by hand-made 1 (${hand.uri}), other 2 (${other.uri})`);
    expect(doc.removed.map((x) => x.uri)).toEqual([solo.uri]);
    const text = await runCli(['destroy', 'hand.yml', '--dry-run'], { cwd: ws, env });
    expect(text.stdout).toContain(`= appliance hand-made 1: kept (${hand.uri}) — not made by appliance-forge`);
    expect(text.stdout).toContain('No changes. Nothing of hand-made 1 to remove.');
    expect((await c.appliance_getAll({})).appliances!.map((a) => a.uri).sort()).toEqual([hand.uri, other.uri].sort());
  });
});
