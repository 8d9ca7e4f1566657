// Reads and validates a declaration in the platform tool's format (docs/design/declaration.md):
// YAML or JSON, sections `stack`, `builders`, `accounts`. Every problem is collected before the
// DeclarationError is thrown, each with file, line and column.
import path from 'node:path';
import { type Document, isScalar, isSeq, LineCounter, parseDocument, type YAMLError } from 'yaml';
import { echo } from '../error-text';
import { RULES } from '../model/field-rules';
import { present } from '../model/present';
import type {
  AccountDecl, AccountRef, BuilderDecl, BundleDecl, BundleFileDecl, Declaration, PackageDecl, PublicationDecl, StackDecl,
} from './declaration';
import { resolveBundleSource, type SourceRoot } from './bundle-source';
import { ACCOUNT, BUILDER, BUNDLE, BUNDLE_FILE, DECLARATION, OS, PACKAGE, STACK } from './declaration-format';
import type { Env } from './env-refs';
import { readInstallation } from './installation';
import { ProblemList, type Problem } from './problems';
import { SecretSet } from './secrets';
import { notIn, SHIPPED_FORMATS, unknownFormat, VOCABULARIES } from './vocabularies';
import { readTextFile } from './text-file';
import { type MapView, type ReaderOptions, YamlReader } from './yaml-reader';

export interface ParseOptions extends ReaderOptions {
  /** Source of `${env:…}` values; defaults to `process.env`. */
  readonly env?: Env;
  /** Accept bundle sources outside the declaration's folder (bundle-source.ts); default false. */
  readonly allowOutsideSources?: boolean | undefined;
  /**
   * false (`--no-publish`): the builders' publication fields and the accounts are not read, so their
   * `${env:…}` variables are neither resolved nor required; builders have no publication. Default true.
   */
  readonly publish?: boolean | undefined;
}

export interface ParseResult {
  readonly declaration?: Declaration;
  /** Errors and warnings, in file order. */
  readonly problems: readonly Problem[];
  /** The variables the file reads through `${env:NAME}`, set or not, sorted. */
  readonly envNames?: readonly string[];
  /** The variables the file reads through `${var:NAME}`, set or not, sorted. */
  readonly varNames?: readonly string[];
}

/** Reads a declaration file. The file name in problems is the one given (relative names stay relative). */
export function parseDeclarationFile(file: string, options: ParseOptions = {}): ParseResult {
  const read = readTextFile(file);
  if ('problem' in read) {
    const problems = new ProblemList(file);
    problems.add(read.at, read.problem);
    return { problems: problems.items };
  }
  return parseDeclaration(read.text, { ...options, file, dir: path.dirname(path.resolve(file)) });
}

/**
 * Parses YAML (or JSON: YAML 1.2 reads it too); each syntax error becomes a problem at its line and
 * column. `quote: false` for a file of secrets: the messages then never quote its text.
 */
export function parseYaml(text: string, problems: ProblemList, o: { quote?: boolean } = {}): { doc: Document.Parsed; lc: LineCounter } {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  for (const e of doc.errors) {
    const p = e.pos[0] >= 0 ? lc.linePos(e.pos[0]) : undefined;
    problems.add(p ? { line: p.line, column: p.col } : undefined, yamlErrorText(e, o.quote ?? true));
  }
  return { doc, lc };
}

/**
 * A YAML syntax error in words: the parser's message, without a position (the problem carries it) or
 * its code, starting in lower case as the other problems do, the text it quotes cut to a readable length.
 */
function yamlErrorText(e: YAMLError, quote: boolean): string {
  const quoted = /^(.*?): ("(?:[^"\\]|\\.)*")$/s.exec(e.message);
  const text = quoted ? (quote ? `${quoted[1]}: ${echo(JSON.parse(quoted[2]!) as string)}` : quoted[1]!) : e.message;
  return /^[A-Z][a-z]/.test(text) ? `${text[0]!.toLowerCase()}${text.slice(1)}` : text;
}

export function parseDeclaration(text: string, o: { file: string; dir: string } & ParseOptions): ParseResult {
  const problems = new ProblemList(o.file);
  const { doc, lc } = parseYaml(text, problems);
  if (doc.errors.length) return { problems: problems.sorted() };

  const secrets = new SecretSet();
  const r = new YamlReader(text, lc, problems, o.env ?? process.env, secrets, { strict: o.strict, envOptional: o.envOptional, vars: o.vars, vocabularies: o.vocabularies });
  const root = r.map(doc.contents, '', DECLARATION);
  if (!root) return { problems: problems.sorted() };

  const publish = o.publish !== false;
  const accounts = publish ? readAccounts(r, root) : undefined;
  const stack = root.need('stack') ? readStack(r, root.map('stack'), { dir: o.dir, allowOutside: o.allowOutsideSources === true }) : undefined;
  const builders = readBuilders(r, root, accounts);

  const envNames = [...r.envNames].sort();
  const varNames = [...r.varNames].sort();
  if (problems.hasErrors || !stack) return { problems: problems.sorted(), envNames, varNames };
  // An image's disk is the builder's size, else the stack's: the service takes the image's profile whole.
  const sized = builders.map((b) =>
    b.installProfile.diskSize === undefined && stack.installation.diskSize !== undefined
      ? { ...b, installProfile: { ...b.installProfile, diskSize: stack.installation.diskSize } }
      : b,
  );
  return {
    declaration: { file: o.file, dir: o.dir, stack, builders: sized, secrets: secrets.list() },
    problems: problems.sorted(),
    envNames,
    varNames,
  };
}

function readStack(r: YamlReader, m: MapView<typeof STACK> | undefined, sources: SourceRoot): StackDecl | undefined {
  if (!m) return undefined;
  const name = m.str('name');
  const version = m.str('version');
  const description = m.str('description');
  const os = m.need('os') ? m.map('os') : undefined;
  const osName = os?.str('name');
  const osVersion = os?.str('version');
  const arch = os?.str('arch');
  const profile = os?.str('profile');
  if (os && osName) r.vocabulary(os.valueAt('name'), () => notIn('stack.os.name', osName, VOCABULARIES.osName));
  if (os?.has('arch') && arch !== undefined) r.vocabulary(os.valueAt('arch'), () => notIn('stack.os.arch', arch, VOCABULARIES.arch));
  const packages = os ? readPackages(r, os) : [];
  const installation = readInstallation(r, m.has('installation') ? m.map('installation') : undefined);
  const bundles = readBundles(r, m, sources);
  if (!name || !version || !os || !osName || !osVersion || arch === undefined || profile === undefined) return undefined;
  return {
    name, version, description,
    os: { name: osName, version: osVersion, arch, profile, at: os.at, profileAt: os.has('profile') ? os.valueAt('profile') : os.at },
    packages, installation, bundles, at: m.at,
  };
}

function readPackages(r: YamlReader, os: MapView<typeof OS>): PackageDecl[] {
  const out: PackageDecl[] = [];
  const seen = new Set<string>();
  for (const item of os.seq('pkgs')) {
    const at = r.at(item, os.keyAt('pkgs'));
    let p: PackageDecl | undefined;
    if (isScalar(item)) {
      const name = r.scalarText(item, 'stack.os.pkgs[]', at);
      if (name) p = { name, at };
    } else {
      const pm = r.map(item, 'stack.os.pkgs[]', PACKAGE, at);
      const name = pm?.str('name');
      if (pm && name) p = { name, version: pm.str('version'), release: pm.str('release'), arch: pm.str('arch'), at };
    }
    if (!p) continue;
    const key = `${p.name}/${p.arch ?? ''}`;
    if (seen.has(key)) r.problems.add(at, `package "${p.name}" is listed twice`);
    seen.add(key);
    out.push(p);
  }
  return out;
}

function readBundles(r: YamlReader, stack: MapView<typeof STACK>, sources: SourceRoot): BundleDecl[] {
  const out: BundleDecl[] = [];
  const seen = new Set<string>();
  for (const item of stack.seq('bundles')) {
    const m = r.map(item, 'stack.bundles[]', BUNDLE, stack.keyAt('bundles'));
    if (!m) continue;
    const name = m.str('name');
    const version = m.str('version');
    const description = m.str('description');
    const files = readBundleFiles(r, m, sources);
    if (name && seen.has(name)) r.problems.add(m.valueAt('name'), `bundle "${name}" is declared twice`);
    if (name) seen.add(name);
    if (!m.has('files') || files.length === 0) r.problems.add(m.keyAt('files'), `bundle "${name ?? '?'}" must list at least one file`);
    if (name && version) out.push({ name, version, description, files, at: m.at });
  }
  return out;
}

function readBundleFiles(r: YamlReader, bundle: MapView<typeof BUNDLE>, sources: SourceRoot): BundleFileDecl[] {
  const out: BundleFileDecl[] = [];
  const seen = new Set<string>();
  for (const item of bundle.seq('files')) {
    const m = r.map(item, 'stack.bundles[].files[]', BUNDLE_FILE, bundle.keyAt('files'));
    if (!m) continue;
    const source = m.str('source');
    const name = m.str('name') ?? (source ? path.basename(source) : undefined);
    const destination = m.str('destination') ?? m.str('installLocation');
    const rights = m.str('rights');
    const ownerGroup = m.str('ownerGroup');
    if (!source || !name) continue;
    // The service refuses upload names with separators, `..` or control characters (wire contract §9).
    if (!RULES.fileName.test(name)) r.problems.add(m.has('name') ? m.valueAt('name') : m.valueAt('source'), `file name ${echo(name)} must be ${RULES.fileName.says}`);
    if (seen.has(name)) r.problems.add(m.at, `file "${name}" is listed twice in this bundle`);
    seen.add(name);
    const found = resolveBundleSource(sources, source);
    if ('problem' in found) r.problems.add(m.valueAt('source'), found.problem);
    out.push({ name, source, path: 'path' in found ? found.path : path.resolve(sources.dir, source), destination, rights, ownerGroup, at: m.at });
  }
  return out;
}

function readAccounts(r: YamlReader, root: MapView<typeof DECLARATION>): Map<string, AccountDecl> {
  const out = new Map<string, AccountDecl>();
  for (const item of root.seq('accounts')) {
    const m = r.map(item, 'accounts[]', ACCOUNT, root.keyAt('accounts'));
    const a = m && readAccount(m);
    if (!m || !a) continue;
    if (out.has(a.name)) r.problems.add(m.valueAt('name'), `account "${a.name}" is declared twice`);
    out.set(a.name, a);
  }
  return out;
}

function readAccount(m: MapView<typeof ACCOUNT>): AccountDecl | undefined {
  const type = m.str('type');
  const name = m.str('name');
  const keystoneUrl = m.str('keystoneUrl');
  const glanceUrl = m.str('glanceUrl');
  const keystoneVersion = m.str('keystoneVersion');
  const login = m.str('login');
  const password = m.str('password');
  if (!type || !name || !keystoneUrl || keystoneVersion === undefined || !login || !password) return undefined;
  return { name, type: 'OpenStack', keystoneUrl, glanceUrl, keystoneVersion: 'v3', login, password, at: m.at };
}

/** `accounts` undefined: publications are not read (ParseOptions.publish). */
function readBuilders(r: YamlReader, root: MapView<typeof DECLARATION>, accounts: Map<string, AccountDecl> | undefined): BuilderDecl[] {
  if (!root.need('builders')) return [];
  const items = root.seq('builders');
  if (items.length === 0 && isSeq(root.node('builders'))) {
    r.problems.add(root.valueAt('builders'), 'builders must list at least one image format');
  }
  const out: BuilderDecl[] = [];
  items.forEach((item, index) => {
    const m = r.map(item, `builders[${index}]`, BUILDER, root.keyAt('builders'));
    if (!m) return;
    const type = m.str('type');
    // The service's own list is asked by plan and apply (resolve.ts): it may offer more than the shipped one.
    if (type) r.vocabulary(m.valueAt('type'), () => unknownFormat(type, SHIPPED_FORMATS, 'the reference server'), { shipped: true });
    const inst = m.has('installation') ? m.map('installation') : undefined;
    const hw = m.has('hardwareSettings') ? m.map('hardwareSettings') : undefined;
    const diskSize = inst?.int('diskSize');
    const memorySize = hw?.int('memory');
    const compress = m.bool('compress') ?? false;
    const publication = accounts && readPublication(r, m, index, accounts);
    if (!type) return;
    out.push({
      index, type, typeAt: m.valueAt('type'),
      installProfile: present({ diskSize, memorySize }),
      compress, publication, at: m.at,
    });
  });
  return out;
}

function readPublication(r: YamlReader, m: MapView<typeof BUILDER>, index: number, accounts: Map<string, AccountDecl>): PublicationDecl | undefined {
  const what = `builders[${index}]`;
  const displayName = m.str('displayName');
  const keystoneDomain = m.str('keystoneDomain');
  const keystoneProject = m.str('keystoneProject');
  const publicImage = m.bool('publicImage') ?? false;
  const needs = BUILDER.needs;
  if (!m.has('account')) {
    for (const [k, need] of Object.entries<readonly string[]>(needs)) {
      if (need.includes('account') && m.has(k)) r.problems.add(m.keyAt(k), `${what}.${k} needs an account to publish to`);
    }
    return undefined;
  }
  const am = m.map('account');
  if (!am) return undefined;
  let account: AccountDecl | AccountRef | undefined;
  const keys = am.keys();
  const refBy = BUILDER.fields.account.refBy;
  if (keys.length === 1 && keys[0] === refBy) {
    const name = am.str(refBy);
    if (name) account = accounts.get(name) ?? { ref: name, at: am.valueAt(refBy) };
  } else {
    account = readAccount(am);
  }
  // A value present but unreadable has already been reported.
  for (const k of needs.account) if (!m.has(k)) r.problems.add(m.keyAt('account'), `${what}.${k} is required to publish`);
  if (!account || !displayName || keystoneDomain === undefined || !keystoneProject) return undefined;
  return { account, displayName, keystoneDomain, keystoneProject, publicImage, at: m.keyAt('account') };
}
