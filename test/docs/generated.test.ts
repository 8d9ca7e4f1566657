// The generated reference pages of docs/ (scripts/gen-docs.mjs, `npm run docs`) are what the code renders now:
// docs/cli.md from the command table and each command's --help (dist/, which the test command builds first),
// docs/action.md from action/action.yml, docs/api/ from the public entry points. Each page is also checked
// against its source by another road than the generator's: the real `--help` output of the command line, the
// parsed action.yml, the exports each entry point's source declares.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';

const root = path.join(__dirname, '../..');
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');

interface GenDocs {
  readonly CLI_PAGE: string;
  readonly ACTION_PAGE: string;
  readonly API_DIR: string;
  renderCliPage(): Promise<string>;
  renderActionPage(actionYml?: string): string;
  filesUnder(dir: string): string[];
}

let gen: GenDocs;
beforeAll(async () => {
  // An .mjs script without types: imported by URL, typed here.
  gen = (await import(pathToFileURL(path.join(root, 'scripts/gen-docs.mjs')).href)) as GenDocs;
});

/** What `node dist/src/cli/main.js ARGS` prints on stdout. */
function cli(...args: string[]): string {
  return execFileSync(process.execPath, [path.join(root, 'dist/src/cli/main.js'), ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
}

/** The long options a help text describes: `--name` at the start of a line (after its short form, if any). */
function helpOptionNames(help: string): string[] {
  return [...help.matchAll(/^ {0,8}(?:-[A-Za-z],\s+)?--([a-z0-9][a-z0-9-]*)/gm)].map((m) => m[1]!);
}

/** The part of docs/cli.md about `name`, before its copy of the --help text: the rendered option table. */
function structuredSection(page: string, name: string): string {
  const start = page.indexOf(`\n## ${name}\n`);
  const end = page.indexOf(`### \`appliance-forge ${name} --help\``, start);
  expect(start, `docs/cli.md has a section for ${name}`).toBeGreaterThan(0);
  expect(end).toBeGreaterThan(start);
  return page.slice(start, end);
}

describe('docs/cli.md', () => {
  it('is what the generator renders from the command table now (npm run docs rewrites it)', async () => {
    expect(read(gen.CLI_PAGE)).toBe(await gen.renderCliPage());
  });

  it('has a section for every command of `appliance-forge --help`', () => {
    const page = read(gen.CLI_PAGE);
    const usage = cli('--help');
    const commands = [...usage.slice(usage.indexOf('commands:')).matchAll(/^  ([a-z]+) /gm)].map((m) => m[1]!);
    expect(commands).toContain('plan');
    for (const name of commands) structuredSection(page, name);
  });

  it("lists every option of the real `plan --help` and `serve --help` output in the command's option table", () => {
    const page = read(gen.CLI_PAGE);
    for (const name of ['plan', 'serve']) {
      const options = helpOptionNames(cli(name, '--help'));
      expect(options).toContain('quiet');
      const table = structuredSection(page, name);
      for (const o of options) expect(table, `--${o} of ${name}`).toContain(`\`--${o}\``);
    }
  });
});

describe('docs/action.md', () => {
  it('is what the generator renders from action/action.yml now', () => {
    expect(read(gen.ACTION_PAGE)).toBe(gen.renderActionPage());
  });

  it('has a row for every input and output of action.yml, with its default', () => {
    const action = parseYaml(read('action/action.yml')) as { inputs: Record<string, { default?: string }>; outputs: Record<string, unknown> };
    const page = read(gen.ACTION_PAGE);
    for (const [name, input] of Object.entries(action.inputs)) {
      const row = page.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
      expect(row, `input ${name}`).toBeDefined();
      if (input.default) expect(row).toContain(`\`${input.default}\``);
    }
    for (const name of Object.keys(action.outputs)) expect(page, `output ${name}`).toContain(`| \`${name}\` |`);
  });
});

// A full TypeDoc run takes 10 s on an idle two-core machine and 25 to 85 s beside other work (as in a test run):
// too long for every test run. The full comparison (every page's bytes) is `npm run docs -- --check`, which CI
// runs; here each entry point's exports, as their syntax lists them, have their page, and no page is left of an
// export that is gone.
describe('docs/api/', () => {
  const ENTRIES = { index: 'src/index.ts', server: 'src/server/index.ts' } as const;

  /**
   * The names a module exports, read from its syntax (a type-checked program of the entry points takes over 20 s
   * here): `export { a, b as c }`, `export type { … }`, exported declarations, and `export * from './m'` followed.
   */
  function exportedNames(file: string): string[] {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
    const names: string[] = [];
    for (const s of source.statements) {
      if (ts.isExportDeclaration(s)) {
        const from = s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) ? s.moduleSpecifier.text : undefined;
        if (s.exportClause && ts.isNamedExports(s.exportClause)) names.push(...s.exportClause.elements.map((e) => e.name.text));
        else if (from?.startsWith('.')) {
          const base = path.resolve(path.dirname(file), from.replace(/\.js$/, ''));
          names.push(...exportedNames(existsSync(`${base}.ts`) ? `${base}.ts` : path.join(base, 'index.ts')));
        }
      } else if (ts.canHaveModifiers(s) && ts.getModifiers(s)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
        if (ts.isVariableStatement(s)) names.push(...s.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : [])));
        else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s) || ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s) || ts.isEnumDeclaration(s)) && s.name) names.push(s.name.text);
      }
    }
    return [...new Set(names)].sort();
  }

  it('has a page for every export of the entry points, and none for a name they do not export', () => {
    const api = path.join(root, gen.API_DIR);
    for (const [module, file] of Object.entries(ENTRIES)) {
      const names = exportedNames(path.join(root, file));
      expect(names.length, file).toBeGreaterThan(5);
      // docs/api/<module>/<kind>/<Name>.md: one page per exported name (typedoc.json: outputFileStrategy members).
      const pages = gen.filesUnder(path.join(api, module)).filter((f) => f.includes('/')).map((f) => path.posix.basename(f, '.md')).sort();
      expect(pages, `docs/api/${module}/ against the exports of ${file} (npm run docs rewrites it)`).toEqual(names);
      const entry = readFileSync(path.join(api, module, 'README.md'), 'utf8');
      for (const name of names) expect(entry, `docs/api/${module}/README.md links ${name}`).toMatch(new RegExp(`\\]\\([a-z-]+/${name}\\.md\\)`));
    }
    expect(readFileSync(path.join(api, 'README.md'), 'utf8')).toContain('(index/README.md)');
  });

  it('holds nothing of the machine that rendered it: no absolute path, no source link', () => {
    const api = path.join(root, gen.API_DIR);
    for (const f of gen.filesUnder(api)) {
      const text = readFileSync(path.join(api, f), 'utf8');
      expect(text, f).not.toContain(root);
      expect(text, f).not.toMatch(/github\.com\/[^)\s]*\/blob\//);
      expect(text, f).not.toMatch(/Defined in/);
    }
  });
});
