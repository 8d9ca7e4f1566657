// Generates the reference pages of docs/ (committed; `npm run docs` builds dist/ first, then runs this):
//   docs/cli.md      the command line: the command table of src/cli/cli.ts (summaries), each command's option
//                    table (the parseArgs options it parses) and its `--help` text, read from the compiled
//                    dist/src/cli/ (the same objects `--help` prints), so the page cannot say what --help does not;
//   docs/action.md   the GitHub Action's inputs and outputs, from action/action.yml;
//   docs/api/        the API reference of the package's entry points `.` and `./server`, by TypeDoc from the doc
//                    comments (typedoc.json: typedoc-plugin-markdown, no source links, no dates; skipErrorChecking:
//                    tsc checks the types, and without TypeDoc's own full check the run takes half the time and
//                    a union's members come in the order of their declaration, not of the checker's visits).
// Each page is rendered whole in memory (docs/api/ into a temporary folder), with nothing from the machine
// (no date, no absolute path, no terminal width), so the same tree renders the same bytes.
// `--check` writes nothing and exits 1 naming each stale file (CI: the committed pages match the code).
// The render functions are exported for test/docs/generated.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** The pages, relative to the root. */
export const CLI_PAGE = 'docs/cli.md';
export const ACTION_PAGE = 'docs/action.md';
export const API_DIR = 'docs/api';
const ACTION_YML = 'action/action.yml';

// ---------------------------------------------------------------------------------------------------------------
// Markdown helpers

/** Text for a table cell: pipes escaped everywhere (GFM splits cells on them, even in code spans), and outside
 * backtick spans the characters Markdown would read as markup. */
export function cell(text) {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 ? part.replace(/\|/g, '\\|') : part.replace(/([\\|*_[\]<>])/g, '\\$1')))
    .join('');
}

const code = (text) => `\`${text.replace(/\|/g, '\\|')}\``;

/** A fenced block that no line of `text` can close (a longer fence than any run of backticks in it). */
function fenced(text, lang = 'text') {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text.replace(/\n+$/, '')}\n${fence}`;
}

function table(header, rows) {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// docs/cli.md

/**
 * The options a help text describes: `-a, --url URL   description` or `      --json   description`, at an
 * indentation of at most 8, followed by continuation lines indented 12 or more. `valued` names the options
 * that take a value (type string in the option table): the word after their flag is the value's name.
 */
export function helpOptions(help, valued) {
  const found = new Map();
  const lines = help.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^( {0,8})(?:-([A-Za-z]),\s+)?--([a-z0-9][a-z0-9-]*)(?=\s|$)(.*)$/.exec(lines[i]);
    if (!m) continue;
    const [, , short, name, after] = m;
    let rest = after;
    let arg;
    if (valued.has(name)) {
      const a = /^ (\S+)(.*)$/.exec(rest);
      if (a) [, arg, rest] = a;
    }
    const text = [rest.trim()];
    while (i + 1 < lines.length && /^ {12,}\S/.test(lines[i + 1])) text.push(lines[++i].trim());
    // The variable that stands in for the flag: a column of its own after the description (connection) or
    // before it, on the flag's line (serve's numbers).
    const env = /^(?:(.*?)\s{2,})?(APPLIANCE_FORGE_[A-Z_]+)$/.exec(text[0] ?? '');
    if (env) text.splice(0, 1, env[1] ?? '');
    let description = text.filter(Boolean).join(' ').replace(/\s{2,}/g, ' ');
    if (env) description += ` (variable \`${env[2]}\`)`;
    if (!found.has(name)) found.set(name, { short, arg, description });
  }
  return found;
}

/** The lines of a help text from `exit status:` to the next line that is not its continuation. */
function exitStatus(help) {
  const lines = help.split('\n');
  const at = lines.findIndex((l) => /^exit status:/.test(l));
  if (at < 0) return undefined;
  const out = [lines[at].replace(/^exit status:\s*/, '')];
  for (let i = at + 1; i < lines.length && /^\s+\S/.test(lines[i]); i++) out.push(lines[i].trim());
  return out.join(' ');
}

function optionRows(options, help) {
  const valued = new Set(Object.entries(options).filter(([, o]) => o.type === 'string').map(([n]) => n));
  const described = helpOptions(help, valued);
  // In the help's order, the options it does not describe after them, --help last.
  const rank = (name) => (name === 'help' ? Infinity : described.has(name) ? [...described.keys()].indexOf(name) : described.size);
  return Object.entries(options)
    .sort(([a], [b]) => rank(a) - rank(b))
    .map(([name, o]) => {
      const d = described.get(name);
      const flags = [...(o.short ? [`-${o.short}`] : []), `--${name}`].map(code).join(', ');
      const value = o.type === 'string' ? code(d?.arg ?? 'VALUE') : '';
      const notes = [...(o.multiple ? ['repeatable'] : [])];
      const shown = Array.isArray(o.default) ? o.default.join(', ') : o.default;
      const dflt = shown === undefined || shown === false || shown === '' ? '' : code(String(shown));
      const description = name === 'help' && !d?.description ? 'print this help and exit 0' : (d?.description ?? '');
      return [flags, value, dflt, [cell(description), ...notes.filter((n) => !description.includes(n))].filter(Boolean).join('; ')];
    });
}

/** docs/cli.md from the compiled command table (dist/src/cli/cli.js: run `tsc -p tsconfig.json` first). */
export async function renderCliPage() {
  const cliModule = path.join(root, 'dist/src/cli/cli.js');
  if (!existsSync(cliModule)) throw new Error(`${path.relative(root, cliModule)} is missing: build first (tsc -p tsconfig.json)`);
  const { COMMANDS, usage } = require(cliModule);
  if (!COMMANDS || typeof usage !== 'function') throw new Error('dist/src/cli/cli.js exports no COMMANDS and usage(): rebuild (tsc -p tsconfig.json)');
  const names = Object.keys(COMMANDS);
  const out = [
    '# Command line reference',
    '',
    '<!-- Generated by `npm run docs` (scripts/gen-docs.mjs) from src/cli/: do not edit. -->',
    '',
    "Generated by `npm run docs` from the command line's command table (src/cli/cli.ts) and each command's options and",
    '`--help` text, so it says what `appliance-forge <command> --help` says; `npm run docs -- --check` (a test)',
    'fails when it is out of date.',
    '',
    fenced(usage()),
    '',
    '## Commands',
    '',
    table(['Command', 'Summary'], names.map((n) => [`[${code(n)}](#${n})`, cell(COMMANDS[n].summary)])),
  ];
  for (const name of names) {
    const command = await COMMANDS[name].load();
    const help = command.help.endsWith('\n') ? command.help : `${command.help}\n`;
    const synopsis = /^usage:\s*(.*)$/m.exec(help)?.[1];
    out.push('', `## ${name}`, '', `${cell(COMMANDS[name].summary[0].toUpperCase() + COMMANDS[name].summary.slice(1))}.`);
    if (synopsis) out.push('', `Synopsis: ${code(synopsis)}`);
    if (command.words?.length) out.push('', `First argument: one of ${command.words.map(code).join(', ')}.`);
    out.push('', '### Options', '', table(['Option', 'Value', 'Default', 'Description'], optionRows(command.options, help)));
    const exit = exitStatus(help);
    if (exit) out.push('', '### Exit status', '', cell(exit));
    out.push('', `### \`appliance-forge ${name} --help\``, '', fenced(help));
  }
  return `${out.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------------------------
// docs/action.md

/** `owner/name` of the repository (package.json's repository URL). */
function repositorySlug() {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  const m = /github\.com[/:]([^/]+\/[^/.]+)/.exec(url ?? '');
  if (!m) throw new Error(`package.json: no GitHub repository URL (${url})`);
  return m[1];
}

const oneLine = (text) => String(text ?? '').trim().replace(/\s+/g, ' ');

/** docs/action.md from the text of action/action.yml. */
export function renderActionPage(actionYml = readFileSync(path.join(root, ACTION_YML), 'utf8')) {
  const action = parseYaml(actionYml);
  const inputs = Object.entries(action.inputs ?? {});
  const outputs = Object.entries(action.outputs ?? {});
  const uses = `${repositorySlug()}/${path.dirname(ACTION_YML)}@v1`;
  // The example's inputs: each must be one of action.yml's (a renamed input fails the generation, not the reader).
  const example = {
    file: 'examples/appliance.yml',
    url: '${{ vars.FORGE_URL }}',
    user: '${{ vars.FORGE_USER }}',
    'api-key': '${{ secrets.FORGE_API_KEY }}',
    'secret-key': '${{ secrets.FORGE_SECRET_KEY }}',
    mode: "${{ github.event_name == 'pull_request' && 'plan' || 'apply' }}",
  };
  for (const k of Object.keys(example)) if (!Object.prototype.hasOwnProperty.call(action.inputs ?? {}, k)) throw new Error(`${ACTION_YML}: the example's input ${k} is not an input`);
  for (const [name, input] of inputs) if (input.required && !(name in example)) throw new Error(`${ACTION_YML}: the example lacks the required input ${name}`);
  const workflow = [
    'on: [push, pull_request]',
    'jobs:',
    '  images:',
    '    runs-on: ubuntu-latest',
    '    steps:',
    '      - uses: actions/checkout@v5',
    `      - uses: ${uses}`,
    '        id: forge',
    '        with:',
    ...Object.entries(example).map(([k, v]) => `          ${k}: ${v}`),
    '      - run: echo "${{ steps.forge.outputs.image-uris }}"',
  ].join('\n');
  const dflt = (input) => (input.default === undefined || input.default === '' ? '' : code(String(input.default)));
  return `${[
    '# GitHub Action reference',
    '',
    '<!-- Generated by `npm run docs` (scripts/gen-docs.mjs) from action/action.yml: do not edit. -->',
    '',
    `Generated by \`npm run docs\` from [action/action.yml](../${ACTION_YML}); \`npm run docs -- --check\` (a test) fails when it is out of date.`,
    '',
    `${cell(oneLine(action.description))} The step runs on \`${action.runs?.using}\` (\`${ACTION_YML.replace(/action\.yml$/, '')}${action.runs?.main}\`, committed: the runner installs nothing).`,
    '',
    '## Example',
    '',
    fenced(workflow, 'yaml'),
    '',
    '## Inputs',
    '',
    table(['Input', 'Required', 'Default', 'Description'], inputs.map(([name, input]) => [code(name), input.required ? 'yes' : 'no', dflt(input), cell(oneLine(input.description))])),
    '',
    '## Outputs',
    '',
    table(['Output', 'Description'], outputs.map(([name, output]) => [code(name), cell(oneLine(output.description))])),
  ].join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------------------------
// docs/api/

/** Runs TypeDoc (typedoc.json) into `out`; throws with its output when it fails. */
export function renderApi(out) {
  const bin = path.join(path.dirname(require.resolve('typedoc/package.json')), 'bin', 'typedoc');
  const r = spawnSync(process.execPath, [bin, '--options', path.join(root, 'typedoc.json'), '--out', out], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
  if (r.status !== 0) throw new Error(`typedoc failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

/** Every file under `dir`, relative to it, '/'-separated, sorted. */
export function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}

/** The files that differ between two folders (missing on either side, or other bytes). */
export function differingFiles(expected, actual) {
  const a = filesUnder(expected);
  const b = new Set(filesUnder(actual));
  const out = [];
  for (const f of a) if (!b.has(f) || !readFileSync(path.join(expected, f)).equals(readFileSync(path.join(actual, f)))) out.push(f);
  for (const f of b) if (!a.includes(f)) out.push(f);
  return out.sort();
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  const check = process.argv.includes('--check');
  const stale = [];
  const page = (file, text) => {
    const at = path.join(root, file);
    const now = existsSync(at) ? readFileSync(at, 'utf8') : undefined;
    if (now === text) return;
    if (check) stale.push(file);
    else {
      writeFileSync(at, text);
      console.log(`wrote ${file}`);
    }
  };
  mkdirSync(path.join(root, 'docs'), { recursive: true });
  page(CLI_PAGE, await renderCliPage());
  page(ACTION_PAGE, renderActionPage());
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'appliance-forge-docs-'));
  try {
    const out = path.join(tmp, 'api');
    renderApi(out);
    const api = path.join(root, API_DIR);
    const differing = differingFiles(out, api);
    if (differing.length) {
      if (check) stale.push(...differing.map((f) => `${API_DIR}/${f}`));
      else {
        rmSync(api, { recursive: true, force: true });
        for (const f of filesUnder(out)) {
          mkdirSync(path.dirname(path.join(api, f)), { recursive: true });
          writeFileSync(path.join(api, f), readFileSync(path.join(out, f)));
        }
        console.log(`wrote ${API_DIR}/ (${differing.length} of ${filesUnder(out).length} files changed)`);
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (stale.length) {
    console.error(`stale generated docs (npm run docs rewrites them):\n${stale.map((f) => `  ${f}`).join('\n')}`);
    process.exitCode = 1;
  } else if (check) console.log('docs/cli.md, docs/action.md and docs/api/ are up to date');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
