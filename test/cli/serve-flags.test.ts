// serve's numeric flags come from one table (src/cli/serve-flags.ts): each is refused outside its range with
// the one message and exit code 2 (before any server starts), its bounds are accepted, its environment
// variable stands in for it, `serve --help` lists it, and docs/server.md's generated block is the table.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BUILDS } from '../../src/model/limits';
import { DEFAULT_SERVE_PORT, parseServeFlags, SERVE_FLAGS, serveFlagDefault, serveFlagsMarkdown, type ServeFlag, type ServeSettings } from '../../src/cli/serve-flags';
import { runCli } from './helpers/cli';

const refusal = (f: ServeFlag, source = `--${f.flag}`): string => {
  const unit = f.unit === 'count' || f.unit === 'port' ? '' : ` ${f.unit}`;
  return `${source} must be a whole number from ${f.min} to ${f.max}${unit}`;
};

/** The setting a flag makes in parsed settings. */
const settingOf = (s: ServeSettings, f: ServeFlag): number | undefined =>
  f.name === 'port' || f.name === 'maxBuilds' || f.name === 'maxCacheBytes' ? s[f.name] : s.limits[f.name];

const DOCS = path.resolve(__dirname, '../../docs/server.md');
const BEGIN = '<!-- BEGIN GENERATED: serve-flags -->\n';
const END = '<!-- END GENERATED: serve-flags -->';

describe('serve flags from one table', () => {
  it('each flag is refused one below its smallest and one above its largest value: exit 2, the one message', async () => {
    const cases = SERVE_FLAGS.flatMap((f) => [f.min - 1, f.max + 1].map((v) => ({ f, v })));
    for (const { f, v } of cases) expect(() => parseServeFlags({ [f.flag]: String(v) }, {})).toThrow(`${refusal(f)}, got "${v}"`);
    // Through the command: two processes (each one start of the CLI), which exit before any server starts.
    const first = SERVE_FLAGS[0]!;
    const last = SERVE_FLAGS.at(-1)!;
    await Promise.all([{ f: first, v: first.min - 1 }, { f: last, v: last.max + 1 }].map(async ({ f, v }) => {
      const r = await runCli(['serve', `--${f.flag}=${v}`]);
      expect([f.flag, v, r.code, r.stderr, r.stdout]).toEqual([f.flag, v, 2, expect.stringContaining(`${refusal(f)}, got "${v}"`), '']);
    }));
  }, 120_000);

  it('a bad environment variable is refused in its name', async () => {
    const f = SERVE_FLAGS.find((x) => x.flag === 'max-jobs')!;
    const r = await runCli(['serve'], { env: { [f.env]: '0' } });
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining(`${refusal(f, f.env)}, got "0"`)]);
  }, 60_000);

  it('the bounds are accepted and converted to the server unit; a flag wins over its variable', () => {
    for (const f of SERVE_FLAGS) {
      for (const v of [f.min, f.max]) expect([f.flag, settingOf(parseServeFlags({ [f.flag]: String(v) }, {}), f)]).toEqual([f.flag, v * f.scale]);
      expect([f.flag, settingOf(parseServeFlags({}, { [f.env]: String(f.min) }), f)]).toEqual([f.flag, f.min * f.scale]);
      expect([f.flag, settingOf(parseServeFlags({ [f.flag]: String(f.max) }, { [f.env]: 'not a number' }), f)]).toEqual([f.flag, f.max * f.scale]);
      for (const bad of ['', '1.5', ' 1', '0x10', '1e3', '-0']) expect(() => parseServeFlags({ [f.flag]: bad }, {})).toThrow(refusal(f));
    }
    expect(parseServeFlags({ 'max-storage-mib-per-user': '2', 'max-build-minutes': '3' }, {}).limits).toEqual({ storageBytesPerUser: 2 * 1024 ** 2, buildTimeoutMs: 180_000 });
  });

  it('without flags or variables (an empty one is unset): the port and build slots by default, the server defaults for the limits', () => {
    const empty = Object.fromEntries(SERVE_FLAGS.map((f) => [f.env, '']));
    for (const env of [{}, empty]) {
      expect(parseServeFlags({}, env)).toEqual({ port: DEFAULT_SERVE_PORT, maxBuilds: DEFAULT_MAX_BUILDS, maxCacheBytes: undefined, limits: {} });
    }
  });

  it('serve --help lists every flag with its variable, default and range', async () => {
    const r = await runCli(['serve', '--help']);
    expect(r.code).toBe(0);
    for (const f of SERVE_FLAGS) {
      expect(r.stdout).toContain(`--${f.flag} N`);
      expect(r.stdout).toContain(`default ${serveFlagDefault(f)}; ${f.min} to ${f.max}`);
      expect(r.stdout).toContain(f.env);
    }
  }, 60_000);

  it("docs/server.md's generated block is the table (node scripts/gen-serve-flags.mjs writes it)", ({ skip }) => {
    const text = readFileSync(DOCS, 'utf8');
    const start = text.indexOf(BEGIN);
    const end = text.indexOf(END);
    if (start < 0 || end < 0) return skip('docs/server.md has no serve-flags markers');
    expect(text.slice(start + BEGIN.length, end)).toBe(serveFlagsMarkdown());
  });
});
