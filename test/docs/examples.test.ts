// The documentation's examples, checked so that a copied one works: README.md and docs/*.md (not docs/design/,
// shipped input documents, nor docs/api/, generated output).
// - ts/typescript/js blocks: type-checked together in one TypeScript program with the project's compiler options,
//   the package's import names mapped to its own sources (package.json "exports").
// - yaml blocks: a declaration (a `stack:` key) is validated offline by the engine, as `appliance-forge validate`
//   does; a workflow or a step list has each `with:` key of an appliance-forge action step checked against the
//   inputs of action/action.yml.
// - sh/bash/shell blocks (and ExecStart= lines of ini blocks): each command line that runs appliance-forge names a
//   command the built CLI has, and each flag it gives appears in that command's --help.
// A block that cannot be checked carries `<!-- example: REASON -->` on the line directly before its fence; the
// test lists those with their reasons. Any other yaml block (neither a declaration nor a workflow) needs one too.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { validateDeclarationFile } from '../../src/engine/validate';
import { pages, ROOT } from './pages';

const root = ROOT;
const cliMain = path.join(root, 'dist/src/cli/main.js');

interface Block {
  /** The page, relative to the repository root. */
  readonly page: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  /** The block's lines, the fence's indentation removed. */
  readonly lines: readonly string[];
  /** The reason of an `<!-- example: … -->` mark directly before the fence. */
  readonly mark?: string;
}

function blocksOf(page: string): Block[] {
  const text = readFileSync(path.join(root, page), 'utf8').split('\n');
  const out: Block[] = [];
  for (let i = 0; i < text.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(text[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const fence = open[2]!;
    const lines: string[] = [];
    let j = i + 1;
    for (; j < text.length; j++) {
      const l = text[j]!;
      if (l.trim().startsWith(fence) && l.trim().replace(/[`~]/g, '') === '') break;
      lines.push(l.slice(Math.min(indent, l.length - l.trimStart().length)));
    }
    const mark = /^\s*<!--\s*example:\s*(.*?)\s*-->\s*$/.exec(text[i - 1] ?? '')?.[1];
    out.push({ page, line: i + 1, lang: open[3]!.toLowerCase(), lines, ...(mark !== undefined ? { mark } : {}) });
    i = j;
  }
  return out;
}

const blocks = pages().flatMap(blocksOf);
const where = (b: Block, offset = 0): string => `${b.page}:${b.line + 1 + offset}`;
const TS_LANGS = new Set(['ts', 'typescript', 'js', 'javascript']);
const SH_LANGS = new Set(['sh', 'bash', 'shell']);
const skipped = blocks.filter((b) => b.mark !== undefined);
const ofKind = (langs: Set<string>): Block[] => blocks.filter((b) => langs.has(b.lang) && b.mark === undefined);

/** What each check covered, printed on one line at the end. */
const counts: Record<string, number> = {};

describe('documentation examples', () => {
  afterAll(() => {
    const checkedLangs = new Set([...TS_LANGS, ...SH_LANGS, 'yaml', 'yml', 'ini']);
    const others = blocks.filter((b) => !checkedLangs.has(b.lang)).length;
    console.log(`doc examples checked: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}; marked not checked: ${skipped.length}; other blocks (output, listings): ${others}`);
  });

  it('lists the examples marked as not checked, each with a reason', () => {
    if (skipped.length > 0) console.log(`doc examples not checked:\n${skipped.map((b) => `  ${b.page}:${b.line} (${b.lang}): ${b.mark}`).join('\n')}`);
    expect(skipped.filter((b) => b.mark === '').map((b) => `${b.page}:${b.line}`), 'a mark without a reason').toEqual([]);
  });

  it('type-checks every ts and js block in one program against the package sources', () => {
    const tsBlocks = ofKind(TS_LANGS);
    expect(tsBlocks.length).toBeGreaterThan(0);
    counts['ts/js blocks'] = tsBlocks.length;
    const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
    const options: ts.CompilerOptions = {
      ...parsed.options,
      noEmit: true,
      declaration: false,
      sourceMap: false,
      allowJs: true,
      checkJs: true,
      baseUrl: root,
      paths: {
        'appliance-forge': ['src/index.ts'],
        'appliance-forge/server': ['src/server/index.ts'],
        'appliance-forge/engine': ['src/engine/index.ts'],
        'appliance-forge/imaging': ['src/imaging/index.ts'],
        'appliance-forge/boot-check': ['src/imaging/boot/index.ts'],
        'appliance-forge/pulumi': ['provider/index.ts'],
        'appliance-forge/pulumi/runtime/v1': ['provider/runtime/v1.ts'],
      },
    };
    // Each block is a module of its own (ESM, so a top-level await is allowed), held in memory beside the tests.
    const virtual = new Map<string, Block>();
    for (const b of tsBlocks) {
      const ext = b.lang.startsWith('j') ? 'mjs' : 'mts';
      virtual.set(path.join(root, 'test/docs/.examples', `${b.page.replace(/[/.]/g, '_')}_${b.line}.${ext}`), b);
    }
    const host = ts.createCompilerHost(options);
    const { getSourceFile, fileExists, readFile } = host;
    host.fileExists = (f) => virtual.has(path.resolve(f)) || fileExists.call(host, f);
    host.readFile = (f) => {
      const b = virtual.get(path.resolve(f));
      return b ? b.lines.join('\n') : readFile.call(host, f);
    };
    host.getSourceFile = (f, lang, onError, create) => {
      const b = virtual.get(path.resolve(f));
      return b ? ts.createSourceFile(f, b.lines.join('\n'), lang, true) : getSourceFile.call(host, f, lang, onError, create);
    };
    const program = ts.createProgram({ rootNames: [...virtual.keys()], options, host });
    const problems: string[] = [];
    for (const d of [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]) {
      problems.push(`options: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    }
    for (const [file, b] of virtual) {
      const sf = program.getSourceFile(file)!;
      for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
        const { line } = sf.getLineAndCharacterOfPosition(d.start ?? 0);
        problems.push(`${where(b, line)}: TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
      }
    }
    expect(problems, `${tsBlocks.length} blocks; a fragment needs its import lines, or <!-- example: fragment --> before its fence`).toEqual([]);
  }, 120_000);

  describe('yaml blocks', () => {
    let dir = '';
    beforeAll(() => {
      // A declaration's bundle sources are read beside it: the examples' files/ folder is there too.
      dir = mkdtempSync(path.join(tmpdir(), 'af-doc-examples-'));
      cpSync(path.join(root, 'examples/files'), path.join(dir, 'files'), { recursive: true });
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const inputs = Object.keys((parseYaml(readFileSync(path.join(root, 'action/action.yml'), 'utf8')) as { inputs: Record<string, unknown> }).inputs);

    /** Every step (an object with `uses:`) of a workflow or a step list. */
    const steps = (v: unknown): Record<string, unknown>[] => {
      if (Array.isArray(v)) return v.flatMap(steps);
      if (v === null || typeof v !== 'object') return [];
      const o = v as Record<string, unknown>;
      return [...(typeof o['uses'] === 'string' ? [o] : []), ...Object.values(o).flatMap(steps)];
    };

    it('validates each declaration and checks the action inputs of each workflow', () => {
      const problems: string[] = [];
      let declarations = 0;
      let workflows = 0;
      for (const b of ofKind(new Set(['yaml', 'yml']))) {
        const text = b.lines.join('\n');
        const docs = parseAllDocuments(text);
        const values: unknown[] = [];
        for (const d of Array.isArray(docs) ? docs : [docs]) {
          if (d.errors.length > 0) problems.push(`${where(b)}: not YAML: ${d.errors[0]!.message.split('\n')[0]}`);
          else values.push(d.toJS());
        }
        const isDeclaration = values.some((v) => v !== null && typeof v === 'object' && !Array.isArray(v) && 'stack' in v);
        const found = steps(values);
        if (isDeclaration) {
          declarations++;
          const file = path.join(dir, `${b.page.replace(/[/.]/g, '_')}_${b.line}.yml`);
          writeFileSync(file, text);
          const r = validateDeclarationFile(file);
          for (const p of r.problems.filter((x) => x.severity === 'error')) problems.push(`${where(b, (p.line ?? 1) - 1)}: ${p.message}`);
        } else if (found.length > 0) {
          workflows++;
          for (const step of found) {
            if (!String(step['uses']).startsWith('appliance-forge/appliance-forge/action@')) continue;
            const given = step['with'];
            for (const key of Object.keys(given !== null && typeof given === 'object' ? given : {})) {
              if (!inputs.includes(key)) problems.push(`${where(b)}: the action has no input "${key}" (action/action.yml)`);
            }
          }
        } else {
          problems.push(`${where(b)}: neither a declaration (stack:) nor a workflow step (uses:); say why with <!-- example: REASON -->`);
        }
      }
      counts['yaml declarations'] = declarations;
      counts['yaml workflows'] = workflows;
      expect(problems, `${declarations} declarations, ${workflows} workflows`).toEqual([]);
    });
  });

  describe('sh blocks', () => {
    const run = promisify(execFile);
    const helps = new Map<string, Promise<string | undefined>>();
    /** The --help text of a command ('' for the top level), or undefined when the CLI does not know it. */
    const help = (command: string): Promise<string | undefined> => {
      let h = helps.get(command);
      if (!h) {
        const args = command === '' ? ['--help'] : [command, '--help'];
        h = run(process.execPath, [cliMain, ...args], { env: { ...process.env, NO_COLOR: '1' } }).then(
          (r) => r.stdout + r.stderr,
          () => undefined,
        );
        helps.set(command, h);
      }
      return h;
    };

    /** The command lines of a block: `\` continuations joined, and a line indented under a command (a synopsis
     *  wrapped) joined to it; quoted text blanked and comments removed. Each with its offset in the block. */
    function commandLines(b: Block): { offset: number; text: string }[] {
      const out: { offset: number; text: string }[] = [];
      let open = false;
      b.lines.forEach((raw, i) => {
        let l = b.lang === 'ini' ? (/^ExecStart=(.*)$/.exec(raw)?.[1] ?? '') : raw;
        l = l.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, 'Q').replace(/(^|\s)#.*$/, '');
        const continues = open || (out.length > 0 && /^\s+\S/.test(raw) && b.lang !== 'ini');
        open = /\\\s*$/.test(l);
        l = l.replace(/\\\s*$/, ' ');
        if (continues && out.length > 0) out[out.length - 1]!.text += ` ${l}`;
        else if (l.trim() !== '') out.push({ offset: i, text: l });
      });
      return out;
    }

    it('runs only commands and flags the built CLI has', async () => {
      expect(existsSync(cliMain), 'dist/ is missing: build it first with `npx tsc -p tsconfig.json`').toBe(true);
      const shBlocks = [...ofKind(SH_LANGS), ...blocks.filter((b) => b.lang === 'ini' && b.mark === undefined)];
      const problems: string[] = [];
      const top = await help('');
      expect(top, 'appliance-forge --help failed').toBeDefined();
      const invocations: { b: Block; offset: number; given: string[]; command: string }[] = [];
      for (const b of shBlocks) {
        for (const { offset, text } of commandLines(b)) {
          for (const segment of text.split(/&&|\|\||;|\s\|\s|\(|\)/)) {
            const words = segment.trim().split(/\s+/).filter((w) => w !== '');
            while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words.shift();
            if (words[0] === 'npx') words.shift();
            if (words.length === 0 || path.basename(words[0]!) !== 'appliance-forge') continue;
            const args = words.slice(1).map((w) => w.replace(/^\[+|[\]…]+$/g, ''));
            const redirect = args.findIndex((w) => /^\d*>|^</.test(w));
            const given = redirect >= 0 ? args.slice(0, redirect) : args;
            const command = given.find((w) => !w.startsWith('-')) ?? '';
            invocations.push({ b, offset, given, command });
          }
        }
      }
      counts['sh/ini blocks'] = shBlocks.length;
      counts['appliance-forge command lines'] = invocations.length;
      // The CLI starts once per command, all at once.
      await Promise.all([...new Set(invocations.map((v) => v.command))].map(help));
      for (const { b, offset, given, command } of invocations) {
        const text = command === '' ? top : await help(command);
        if (text === undefined || (command !== '' && !new RegExp(`^\\s+${command.replace(/\W/g, '\\$&')}\\s`, 'm').test(top!))) {
          problems.push(`${where(b, offset)}: appliance-forge has no command "${command}"`);
          continue;
        }
        for (const w of given.filter((x) => /^--?[A-Za-z]/.test(x))) {
          const name = w.replace(/=.*$/, '');
          // Terraform's single dash: -var is --var; a single letter is a short option (-p,).
          const flag = /^-[A-Za-z]$/.test(name) ? name : `--${name.replace(/^-+/, '')}`;
          const esc = flag.replace(/[-]/g, '\\-');
          if (!new RegExp(`(^|[\\s,(\\[])${esc}(?=[\\s=,)\\]|]|$)`, 'm').test(text)) {
            problems.push(`${where(b, offset)}: appliance-forge ${command}${command ? ' ' : ''}has no option ${w} (not in its --help)`);
          }
        }
      }
      expect(problems, `${shBlocks.length} blocks, ${invocations.length} appliance-forge command lines`).toEqual([]);
    }, 120_000);
  });
});
