// The error tree as docs/client.md promises it: every error class the sources declare (and the public entry
// points export) extends ForgeError with a code of its own, docs/client.md's table lists exactly those codes
// with the command line's exit code for each, and `instanceof` / `isForgeError` recognise an error made by
// a second copy of the package: an esbuild bundle of the defining modules, made as the Action's bundle is.
import { readdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/engine/failure';
import { ForgeError, isForgeError, type ForgeErrorClass } from '../../src/errors';

const root = path.resolve(__dirname, '../..');
const SOURCE_DIRS = ['src', 'provider', 'action/src'];
const CLASS = /^(export )?(?:abstract )?class (\w+) extends (\w+)/gm;
// Classes that never leave their module, with why: a stop of the boot session becomes the check's result;
// a stale claim rolls back its fenced transaction and becomes "nothing written" (queue/pg-boss.ts).
const PRIVATE = new Set(['SessionStop', 'StaleClaim']);

type ErrorClass = ForgeErrorClass & { readonly code: string };
const ROOT: unknown = ForgeError;
interface Defined {
  readonly cls: ErrorClass;
  readonly file: string;
}

// Constructor arguments of one instance of each class: the exit codes and the second copy are tested on it.
const SAMPLE_ARGS: Readonly<Record<string, readonly unknown[]>> = {
  ApiError: [404, { statusCode: 404, localizedErrorMsg: { message: 'no appliance 7', messageId: 'appliance.notFound' } }],
  HttpError: [503, '<html>busy</html>'],
  TransportError: ['connection refused'],
  DecodeError: ['not a number', 'appliance.version'],
  FiqlError: ['unexpected )', 4],
  JobFailedError: [{ message: 'failed', errorMessage: 'disk full' }],
  JobCancelledError: [{ message: 'cancelled' }],
  WaitTimeoutError: [1000],
  ChecksumError: ['images/1', 'aa', 'bb'],
  AbortedError: [],
  UsageError: ['--port: not a number'],
  ConnectSettingsError: ['no service URL'],
  VarsError: ['--var x: not NAME=VALUE'],
  BuilderSelectionError: ['--only vmdk: no such builder'],
  DeclarationError: [[{ file: 'forge.yml', line: 1, column: 1, severity: 'error', message: 'bad' }]],
  ApplyError: [[{ what: 'image 0 (QCOW2)', error: new Error('disk full') }]],
  EmbeddedUnavailableError: ['install better-sqlite3'],
  SqliteUnavailableError: ['no SQLite engine'],
  DataFolderError: ['/tmp/x', 'is a symbolic link'],
  BlobStoreError: ['config', 'blob store: not an s3:// URL'],
  ServerConfigError: ['--role worker needs the database every node of a farm shares'],
  ServiceError: [404, 'no appliance 7'],
  ImagingError: ['input', 'bad size'],
  SharedLayerError: ['the shared OS layer 0123456789ab is not the file that was stored'],
  DebianIndexError: ['checksum', 'Packages: sha256 differs'],
  OpenStackError: ['auth', 'Keystone refused the login'],
  BootCheckError: ['input', 'no such image'],
  ConnectionConfigError: ['url'],
  ProviderError: ['input', 'packages[0]: package "curlx" is not in Debian 13 x86_64', { failures: [{ property: 'packages[0]', reason: 'not found' }] }],
  HostError: ['no sudo'],
};

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((d) => {
    const rel = path.join(dir, d.name);
    if (d.isDirectory()) return sources(rel);
    return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [rel] : [];
  });
}

const isErrorClass = (v: unknown): v is ErrorClass => typeof v === 'function' && (v as { prototype?: unknown }).prototype instanceof Error;

/** Every exported class that is an Error, by the module that declares it; a private class must be in PRIVATE. */
async function declaredErrorClasses(): Promise<Map<string, Defined>> {
  const found = new Map<string, Defined>();
  for (const file of SOURCE_DIRS.flatMap(sources)) {
    const decls = [...readFileSync(path.join(root, file), 'utf8').matchAll(CLASS)];
    if (!decls.length) continue;
    const mod = (await import(path.join(root, file))) as Record<string, unknown>;
    for (const [, exported, name] of decls) {
      if (!exported) {
        expect(PRIVATE, `${file}: class ${name} is not exported; an error class must be (or be listed as private)`).toContain(name);
        continue;
      }
      const cls = mod[name!];
      // The root has no code: it is what the others extend.
      if (isErrorClass(cls) && cls !== ROOT) found.set(name!, { cls, file });
    }
  }
  return found;
}

/** The package's public entry points (package.json `exports`), as their sources. */
function entryPoints(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, string> };
  return Object.values(pkg.exports).flatMap((target) => {
    const m = /^\.\/dist\/(.+)\.js$/.exec(target);
    return m ? [`${m[1]}.ts`] : [];
  });
}

/** The table of docs/client.md: code → [class, exit code]. */
function readmeTable(): Map<string, readonly [string, string]> {
  const readme = readFileSync(path.join(root, 'docs/client.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Error codes\n'));
  expect(section.length, 'docs/client.md: no "## Error codes" section').toBeGreaterThan(1);
  const rows = new Map<string, readonly [string, string]>();
  for (const m of section.matchAll(/^\| `(E_\w+)` \| `(\w+)` \| [^\n]* \| (\S+) \|$/gm)) {
    expect(rows.has(m[1]!), `docs/client.md lists ${m[1]} twice`).toBe(false);
    rows.set(m[1]!, [m[2]!, m[3]!]);
  }
  return rows;
}

const sample = (name: string, cls: ErrorClass): ForgeError => {
  const args = SAMPLE_ARGS[name];
  if (!args) throw new Error(`add constructor arguments for ${name} to SAMPLE_ARGS`);
  return Reflect.construct(cls, args) as ForgeError;
};

let declared: Map<string, Defined>;

beforeAll(async () => {
  declared = await declaredErrorClasses();
});

describe('the error tree', () => {
  it('holds every error class the sources declare, each with a code of its own', () => {
    expect(declared.size).toBeGreaterThanOrEqual(26);
    const codes = new Map<string, string>();
    for (const [name, { cls, file }] of declared) {
      expect(Object.prototype.isPrototypeOf.call(ForgeError, cls), `${file}: ${name} does not extend ForgeError`).toBe(true);
      expect(Object.hasOwn(cls, 'code'), `${file}: ${name} has no static code`).toBe(true);
      expect(codes.get(cls.code), `${cls.code} is the code of ${codes.get(cls.code)} and ${name}`).toBeUndefined();
      codes.set(cls.code, name);
      const e = sample(name, cls);
      expect([e.code, e.name, e instanceof cls, isForgeError(e, cls), isForgeError(e)]).toEqual([cls.code, name === 'AbortedError' ? 'AbortError' : name, true, true, true]);
    }
  });

  it('the public entry points export only classes of the tree', async () => {
    const classes = new Set<unknown>([...declared.values()].map((d) => d.cls));
    let seen = 0;
    for (const entry of entryPoints()) {
      const mod = (await import(path.join(root, entry))) as Record<string, unknown>;
      for (const [name, v] of Object.entries(mod)) {
        if (!isErrorClass(v)) continue;
        seen++;
        expect(classes.has(v) || v === ROOT, `${entry} exports ${name}, which the sources do not declare`).toBe(true);
      }
    }
    expect(seen).toBeGreaterThan(10);
  });
});

describe('the table of error codes in docs/client.md', () => {
  it('lists exactly the codes of the tree, each with its class and the command line’s exit code', () => {
    const rows = readmeTable();
    const expected = new Map<string, readonly [string, string]>();
    for (const [name, { cls, file }] of declared) {
      // The provider's and the Action's errors never reach the command line.
      let exit = '—';
      if (file.startsWith('src/')) {
        const f = describeFailure(sample(name, cls), { mask: (t) => t });
        exit = f.interrupted ? '130' : String(f.exitCode);
      }
      expected.set(cls.code, [name, exit]);
    }
    const sorted = (m: Map<string, readonly [string, string]>) => [...m].sort(([a], [b]) => a.localeCompare(b));
    expect(sorted(rows)).toEqual(sorted(expected));
  });
});

describe('a second copy of the package', () => {
  let copy: Map<string, ErrorClass>;
  let copyIsForgeError: typeof isForgeError;

  beforeAll(() => {
    // One bundle of every defining module (minified, names kept: as scripts/build-action.mjs makes the Action's).
    const files = [...new Set([...declared.values()].map((d) => d.file)), 'src/errors.ts'];
    const contents = files.map((f, i) => `export * as m${i} from ${JSON.stringify(path.join(root, f))};`).join('\n');
    const out = buildSync({
      stdin: { contents, resolveDir: root, loader: 'ts' }, bundle: true, platform: 'node', target: 'node20', format: 'cjs',
      minify: true, keepNames: true, external: ['better-sqlite3'], write: false, logLevel: 'error',
    });
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'af-error-copy-')), 'copy.js');
    writeFileSync(file, out.outputFiles[0]!.text);
    const mods = createRequire(file)(file) as Record<string, Record<string, unknown>>;
    copy = new Map();
    for (const [name, { file: f }] of declared) {
      const cls = mods[`m${files.indexOf(f)}`]![name];
      if (!isErrorClass(cls)) throw new Error(`the copy has no class ${name}`);
      copy.set(name, cls);
    }
    copyIsForgeError = mods[`m${files.length - 1}`]!.isForgeError as typeof isForgeError;
  });

  it('is a copy: other classes, other prototypes', () => {
    for (const [name, { cls }] of declared) expect(copy.get(name), name).not.toBe(cls);
    expect(copyIsForgeError).not.toBe(isForgeError);
  });

  it('makes errors that instanceof and isForgeError recognise by class, in both directions', () => {
    const names = [...declared.keys()];
    for (const name of names) {
      const mine = declared.get(name)!.cls;
      const theirs = copy.get(name)!;
      for (const [e, other] of [[sample(name, theirs), copy], [sample(name, mine), undefined]] as const) {
        const fromCopy = other !== undefined;
        expect(Object.prototype.isPrototypeOf.call(mine.prototype, e), name).toBe(!fromCopy);
        expect(e instanceof ForgeError, name).toBe(true);
        expect([e instanceof mine, isForgeError(e, mine), copyIsForgeError(e, theirs), copyIsForgeError(e)], name).toEqual([true, true, true, true]);
        // Exactly its own class and the ones above it, none of the others.
        for (const otherName of names) {
          const o = declared.get(otherName)!.cls;
          const above = otherName === name || Object.prototype.isPrototypeOf.call(o, mine);
          expect(isForgeError(e, o), `${name} as ${otherName}`).toBe(above);
        }
      }
    }
  });

  it('narrows to the class, and an error of 0.1.0 (its brand and code only) is still recognised', () => {
    const { cls: ApiError } = declared.get('ApiError')!;
    const e: unknown = sample('ApiError', copy.get('ApiError')!);
    if (!isForgeError(e, ApiError as unknown as ForgeErrorClass<ForgeError & { status: number }>)) throw new Error('not recognised');
    expect(e.status).toBe(404);
    const old = Object.assign(new Error('404: gone'), { code: 'E_API', [Symbol.for('appliance-forge.error')]: true });
    expect([isForgeError(old), isForgeError(old, ApiError), isForgeError(old, declared.get('HttpError')!.cls)]).toEqual([true, true, false]);
    expect(isForgeError(new Error('plain'))).toBe(false);
  });
});
