// Reads and validates a declaration in the platform tool's format (docs/design/declaration.md):
// YAML or JSON, sections `stack`, `builders`, `accounts`. Every problem is collected before the
// DeclarationError is thrown, each with file, line and column.
import path from 'node:path';
import { type Document, isScalar, isSeq, LineCounter, parseDocument, type YAMLError } from 'yaml';
import { echo } from '../error-text';
import { isHttpUrl, RIGHTS_PATTERN } from '../model/field-rules';
import { openStackAccountFields } from '../model/resources';
import type {
  AccountDecl, AccountRef, BuilderDecl, BundleDecl, BundleFileDecl, Declaration, PackageDecl, PublicationDecl, StackDecl,
} from './declaration';
import { resolveBundleSource, type SourceRoot } from './bundle-source';
import type { Env } from './env-refs';
import { INSTALL_KEYS, NOT_SET, readInstallation } from './installation';
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

const DEFAULT_PROFILE = 'Minimal';
const DEFAULT_ARCH = 'x86_64';
const DEFAULT_DOMAIN = 'Default';

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
  const root = r.map(doc.contents, '', ['stack', 'builders', 'accounts']);
  if (!root) return { problems: problems.sorted() };

  const publish = o.publish !== false;
  const accounts = publish ? readAccounts(r, root) : new Map<string, AccountDecl>();
  const stack = root.has('stack')
    ? readStack(r, root.map('stack', STACK_KEYS), { dir: o.dir, allowOutside: o.allowOutsideSources === true })
    : (problems.add(root.at, 'stack is required'), undefined);
  const builders = readBuilders(r, root, publish ? accounts : undefined);

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

const STACK_KEYS = ['name', 'version', 'description', 'os', 'installation', 'bundles'] as const;
const OS_KEYS = ['name', 'version', 'arch', 'profile', 'pkgs', 'updateTo'] as const;
const PKG_KEYS = ['name', 'version', 'release', 'arch'] as const;
/** A builder's own installation: only the disk size differs per image. */
const BUILDER_INSTALL_KEYS = ['diskSize'] as const;
const BUNDLE_KEYS = ['name', 'version', 'description', 'files', 'license'] as const;
const FILE_KEYS = ['name', 'source', 'destination', 'installLocation', 'rights', 'ownerGroup'] as const;
const BUILDER_KEYS = [
  'type', 'installation', 'hardwareSettings', 'account', 'displayName', 'keystoneDomain', 'keystoneProject',
  'publicImage', 'compress',
] as const;
const ACCOUNT_KEYS = ['type', 'name', 'glanceUrl', 'keystoneUrl', 'keystoneVersion', 'login', 'password'] as const;

function readStack(r: YamlReader, m: MapView | undefined, sources: SourceRoot): StackDecl | undefined {
  if (!m) return undefined;
  const name = m.str('name', true);
  const version = m.str('version', true);
  const description = m.str('description');
  const os = m.has('os') ? m.map('os', OS_KEYS) : (r.problems.add(m.keyAt('os'), 'stack.os is required'), undefined);
  const osName = os?.str('name', true);
  const osVersion = os?.str('version', true);
  const arch = os?.str('arch') ?? DEFAULT_ARCH;
  const profile = os?.str('profile') ?? DEFAULT_PROFILE;
  if (os && osName) r.vocabulary(os.valueAt('name'), () => notIn('stack.os.name', osName, VOCABULARIES.osName));
  if (os?.has('arch')) r.vocabulary(os.valueAt('arch'), () => notIn('stack.os.arch', arch, VOCABULARIES.arch));
  const packages = os ? readPackages(r, os) : [];
  const installation = readInstallation(r, m.has('installation') ? m.map('installation', INSTALL_KEYS, NOT_SET) : undefined);
  const bundles = readBundles(r, m, sources);
  if (!name || !version || !os || !osName || !osVersion) return undefined;
  return {
    name, version, description,
    os: { name: osName, version: osVersion, arch, profile, at: os.at, profileAt: os.has('profile') ? os.valueAt('profile') : os.at },
    packages, installation, bundles, at: m.at,
  };
}

function readPackages(r: YamlReader, os: MapView): PackageDecl[] {
  const out: PackageDecl[] = [];
  const seen = new Set<string>();
  for (const item of os.seq('pkgs')) {
    const at = r.at(item, os.keyAt('pkgs'));
    let p: PackageDecl | undefined;
    if (isScalar(item)) {
      const name = r.scalarText(item, 'stack.os.pkgs[]', at);
      if (name) p = { name, at };
    } else {
      const pm = r.map(item, 'stack.os.pkgs[]', PKG_KEYS, at);
      const name = pm?.str('name', true);
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

function readBundles(r: YamlReader, stack: MapView, sources: SourceRoot): BundleDecl[] {
  const out: BundleDecl[] = [];
  const seen = new Set<string>();
  for (const item of stack.seq('bundles')) {
    const m = r.map(item, 'stack.bundles[]', BUNDLE_KEYS, stack.keyAt('bundles'));
    if (!m) continue;
    const name = m.str('name', true);
    const version = m.str('version', true);
    const description = m.str('description');
    const files = readBundleFiles(r, m, sources);
    if (name && seen.has(name)) r.problems.add(m.valueAt('name'), `bundle "${name}" is declared twice`);
    if (name) seen.add(name);
    if (!m.has('files') || files.length === 0) r.problems.add(m.keyAt('files'), `bundle "${name ?? '?'}" must list at least one file`);
    if (name && version) out.push({ name, version, description, files, at: m.at });
  }
  return out;
}

function readBundleFiles(r: YamlReader, bundle: MapView, sources: SourceRoot): BundleFileDecl[] {
  const out: BundleFileDecl[] = [];
  const seen = new Set<string>();
  for (const item of bundle.seq('files')) {
    const m = r.map(item, 'stack.bundles[].files[]', FILE_KEYS, bundle.keyAt('files'));
    if (!m) continue;
    const source = m.str('source', true);
    const name = m.str('name') ?? (source ? path.basename(source) : undefined);
    const destination = m.str('destination') ?? m.str('installLocation');
    const rights = m.str('rights');
    const ownerGroup = m.str('ownerGroup');
    if (rights !== undefined && !RIGHTS_PATTERN.test(rights)) {
      r.problems.add(m.valueAt('rights'), 'rights must be an octal mode such as 0644');
    }
    if (!source || !name) continue;
    if (!isPlainFileName(name)) r.problems.add(m.has('name') ? m.valueAt('name') : m.valueAt('source'), `file name "${name}" must be a plain file name`);
    if (seen.has(name)) r.problems.add(m.at, `file "${name}" is listed twice in this bundle`);
    seen.add(name);
    const found = resolveBundleSource(sources, source);
    if ('problem' in found) r.problems.add(m.valueAt('source'), found.problem);
    out.push({ name, source, path: 'path' in found ? found.path : path.resolve(sources.dir, source), destination, rights, ownerGroup, at: m.at });
  }
  return out;
}

/** The service refuses upload names with separators, `..` or control characters (wire contract §9). */
function isPlainFileName(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  return name !== '.' && name !== '..' && !/[/\\\u0000-\u001f\u007f]/.test(name);
}

function readAccounts(r: YamlReader, root: MapView): Map<string, AccountDecl> {
  const out = new Map<string, AccountDecl>();
  for (const item of root.seq('accounts')) {
    const m = r.map(item, 'accounts[]', ACCOUNT_KEYS, root.keyAt('accounts'));
    const a = m && readAccount(r, m, 'accounts[]');
    if (!m || !a) continue;
    if (out.has(a.name)) r.problems.add(m.valueAt('name'), `account "${a.name}" is declared twice`);
    out.set(a.name, a);
  }
  return out;
}

function readAccount(r: YamlReader, m: MapView, what: string): AccountDecl | undefined {
  m.model(openStackAccountFields);
  const type = m.str('type', true);
  const name = m.str('name', true);
  const keystoneUrl = m.str('keystoneUrl', true);
  const glanceUrl = m.str('glanceUrl');
  const keystoneVersion = m.str('keystoneVersion') ?? 'v3';
  const login = m.str('login', true);
  const password = m.str('password', true);
  if (type !== undefined && type.toLowerCase() !== 'openstack') {
    r.problems.add(m.valueAt('type'), `${what}.type: only OpenStack accounts are supported`);
  }
  if (keystoneVersion !== 'v3') r.problems.add(m.valueAt('keystoneVersion'), `${what}.keystoneVersion must be v3`);
  for (const [k, v] of [['keystoneUrl', keystoneUrl], ['glanceUrl', glanceUrl]] as const) {
    if (v !== undefined && !isHttpUrl(v)) r.problems.add(m.valueAt(k), `${what}.${k} must be an http(s) URL`);
  }
  if (!type || !name || !keystoneUrl || !login || !password) return undefined;
  return { name, type: 'OpenStack', keystoneUrl, glanceUrl, keystoneVersion: 'v3', login, password, at: m.at };
}

/** `accounts` undefined: publications are not read (ParseOptions.publish). */
function readBuilders(r: YamlReader, root: MapView, accounts: Map<string, AccountDecl> | undefined): BuilderDecl[] {
  if (!root.has('builders')) {
    r.problems.add(root.at, 'builders is required: list at least one image format');
    return [];
  }
  const items = root.seq('builders');
  if (items.length === 0 && isSeq(root.node('builders'))) {
    r.problems.add(root.valueAt('builders'), 'builders must list at least one image format');
  }
  const out: BuilderDecl[] = [];
  items.forEach((item, index) => {
    const m = r.map(item, `builders[${index}]`, BUILDER_KEYS, root.keyAt('builders'));
    if (!m) return;
    const type = m.str('type', true);
    if (type) r.vocabulary(m.valueAt('type'), () => unknownFormat(type, SHIPPED_FORMATS, 'the reference server'));
    const inst = m.has('installation') ? m.map('installation', BUILDER_INSTALL_KEYS, 'a builder sets only diskSize; the rest goes in stack.installation') : undefined;
    const hw = m.has('hardwareSettings') ? m.map('hardwareSettings', ['memory', 'cpu', 'hwType']) : undefined;
    const diskSize = inst?.int('diskSize', 1);
    const memorySize = hw?.int('memory', 1);
    const compress = m.bool('compress') ?? false;
    const publication = accounts && readPublication(r, m, index, accounts);
    if (!type) return;
    out.push({
      index, type, typeAt: m.valueAt('type'),
      installProfile: { ...(diskSize !== undefined ? { diskSize } : {}), ...(memorySize !== undefined ? { memorySize } : {}) },
      compress, publication, at: m.at,
    });
  });
  return out;
}

function readPublication(r: YamlReader, m: MapView, index: number, accounts: Map<string, AccountDecl>): PublicationDecl | undefined {
  const what = `builders[${index}]`;
  const displayName = m.str('displayName');
  const keystoneDomain = m.str('keystoneDomain') ?? DEFAULT_DOMAIN;
  const keystoneProject = m.str('keystoneProject');
  const publicImage = m.bool('publicImage') ?? false;
  if (!m.has('account')) {
    for (const k of ['displayName', 'keystoneProject', 'keystoneDomain'] as const) {
      if (m.has(k)) r.problems.add(m.keyAt(k), `${what}.${k} needs an account to publish to`);
    }
    return undefined;
  }
  const am = m.map('account', ACCOUNT_KEYS);
  if (!am) return undefined;
  let account: AccountDecl | AccountRef | undefined;
  const keys = am.keys();
  if (keys.length === 1 && keys[0] === 'name') {
    const name = am.str('name', true);
    if (name) account = accounts.get(name) ?? { ref: name, at: am.valueAt('name') };
  } else {
    account = readAccount(r, am, `${what}.account`);
  }
  // A value present but unreadable has already been reported.
  if (!m.has('displayName')) r.problems.add(m.keyAt('account'), `${what}.displayName is required to publish`);
  if (!m.has('keystoneProject')) r.problems.add(m.keyAt('account'), `${what}.keystoneProject is required to publish`);
  if (!account || !displayName || !keystoneProject) return undefined;
  return { account, displayName, keystoneDomain, keystoneProject, publicImage, at: m.keyAt('account') };
}
