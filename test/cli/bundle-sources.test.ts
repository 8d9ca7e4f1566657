// A bundle `source` may name only a file inside the declaration's folder (real paths compared): `../`,
// an absolute path and a committed link pointing out are errors of validate (at their line and column)
// and of plan and apply, naming --allow-outside-sources, which accepts them.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { examplesWorkspace } from '../engine/helpers/service';
import { cliBundle, runCli } from './helpers/cli';

/** The absolute path of `<ws>/outside.txt`, in a source list. */
const ABSOLUTE = '{outside}';

/**
 * `<ws>/decl/app.yml`: examples/local.yml whose bundle lists `sources`, beside `<ws>/outside.txt`;
 * `decl/files/escape.txt` is a link pointing out, `decl/files/inner.html` one pointing in.
 */
function workspace(sources: readonly string[]): { decl: string; outside: string } {
  const ws = examplesWorkspace('af-sources-');
  const decl = path.join(ws, 'decl');
  mkdirSync(decl);
  const outside = path.join(ws, 'outside.txt');
  writeFileSync(outside, 'a file of the machine, not of the declaration\n');
  mkdirSync(path.join(decl, 'files'));
  writeFileSync(path.join(decl, 'files/index.html'), '<h1>hello</h1>\n');
  // A committed link pointing out, and one pointing at a file of the folder (accepted).
  symlinkSync('../../outside.txt', path.join(decl, 'files/escape.txt'));
  symlinkSync('index.html', path.join(decl, 'files/inner.html'));
  const entries = sources.map((s, i) => `        - {name: f${i}, source: '${s === ABSOLUTE ? outside : s}', destination: /srv/}\n`).join('');
  const text = readFileSync(path.join(ws, 'local.yml'), 'utf8').replace(/      files:\n[\s\S]*?(?=builders:)/, `      files:\n${entries}`);
  writeFileSync(path.join(decl, 'app.yml'), text);
  return { decl, outside };
}


describe('bundle sources stay inside the declaration folder', () => {
  beforeAll(() => {
    cliBundle();
  });

  it('validate (and --strict) report ../, an absolute path and a link pointing out at their line; --allow-outside-sources accepts them', async () => {
    const { decl } = workspace(['../outside.txt', ABSOLUTE, 'files/escape.txt', 'files/inner.html']);
    for (const args of [['validate', 'app.yml'], ['validate', 'app.yml', '--strict']]) {
      const r = await runCli(args, { cwd: decl });
      expect(r.code, r.stderr).toBe(2);
      const lines = r.stderr.split('\n').filter((l) => l.includes('is outside the declaration\'s folder'));
      expect(lines).toHaveLength(3);
      for (const l of lines) expect(l).toMatch(/^app\.yml:\d+:\d+: error: bundle source \S+ is outside the declaration's folder \(it is \S+outside\.txt\).*--allow-outside-sources/);
      expect(r.stdout).toBe('app.yml: invalid (3 errors, 0 warnings)\n');
    }
    const ok = await runCli(['validate', 'app.yml', '--strict', '--allow-outside-sources'], { cwd: decl });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('plan and apply refuse them before any server starts (exit 2, option named); plan accepts them with --allow-outside-sources', async () => {
    const up = workspace(['../outside.txt', 'files/index.html']);
    const abs = workspace([ABSOLUTE]);
    const link = workspace(['files/escape.txt']);
    for (const [dir, source] of [[up.decl, '../outside.txt'], [abs.decl, abs.outside], [link.decl, 'files/escape.txt']] as const) {
      for (const mode of ['plan', 'apply']) {
        const r = await runCli([mode, 'app.yml', '--quiet'], { cwd: dir });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(new RegExp(`app\\.yml:\\d+:\\d+: error: bundle source ${source.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is outside the declaration's folder.*--allow-outside-sources`));
      }
    }
    const allowed = await runCli(['plan', 'app.yml', '--quiet', '--json', '--allow-outside-sources'], { cwd: link.decl });
    expect(allowed.code, allowed.stderr).toBe(0);
    const doc = JSON.parse(allowed.stdout) as { changes: Array<{ kind: string; name: string; action: string }> };
    expect(doc.changes).toContainEqual(expect.objectContaining({ kind: 'file', name: 'example-site/f0', action: 'create' }));
  });
});
