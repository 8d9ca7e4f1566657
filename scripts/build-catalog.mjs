#!/usr/bin/env node
// Builds data/debian-12-amd64.tsv.gz, the package catalog of the reference server, from the Debian 12
// (bookworm) main amd64 package index that apt keeps under /var/lib/apt/lists (run `apt-get update`
// first). Plain Node, no TypeScript, no dependency.
//
//   node scripts/build-catalog.mjs [--lists /var/lib/apt/lists] [--suite bookworm] [--out data/debian-12-amd64.tsv.gz]
//
// Output: gzip'd UTF-8 text. Lines starting with `#` are metadata (`#key\tvalue`), then one header line
// naming the columns, then one package per line, tab-separated:
//   name epoch version release arch size installedSize priority section fullName
// `version` is the upstream part, `release` the Debian revision (empty for native packages), `epoch` 0 when
// absent, `installedSize` in KiB as in the index, `fullName` empty when it is `<name>_<version[-release]>_<arch>.deb`.
// Rows are sorted by name, then arch, then Debian version order, so a package's id (its 1-based row
// number) is stable for a given index, and the last row of a (name, arch) run is its latest version.
// Packages files carry no build date: the loader uses the Release file's `Date` (`#date`) for all packages.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = parseArgs(process.argv.slice(2));
const listsDir = args.lists ?? '/var/lib/apt/lists';
const suite = args.suite ?? 'bookworm';
const out = resolve(root, args.out ?? 'data/debian-12-amd64.tsv.gz');

const COLUMNS = ['name', 'epoch', 'version', 'release', 'arch', 'size', 'installedSize', 'priority', 'section', 'fullName'];

main();

function main() {
  const files = readdirSync(listsDir);
  // `_dists_bookworm_` and not `bookworm-updates`/`bookworm-security`: the release itself.
  const packagesFile = files.find((f) => f.includes(`_dists_${suite}_main_binary-amd64_Packages`));
  const releaseFile = files.find((f) => f.endsWith(`_dists_${suite}_InRelease`)) ?? files.find((f) => f.endsWith(`_dists_${suite}_Release`));
  if (!packagesFile || !releaseFile) {
    fail(`no ${suite} main binary-amd64 Packages or (In)Release file in ${listsDir}: run \`apt-get update\` first`);
  }
  const release = readFileSync(join(listsDir, releaseFile), 'utf8');
  const date = field(release, 'Date');
  if (!date || Number.isNaN(Date.parse(date))) fail(`no Date in ${releaseFile}`);

  const text = catFile(join(listsDir, packagesFile));
  const pkgs = [];
  for (const stanza of text.split(/\n\n+/)) {
    if (!stanza.trim()) continue;
    pkgs.push(toRow(stanza));
  }
  pkgs.sort((a, b) => cmpStr(a.name, b.name) || cmpStr(a.arch, b.arch) || compareVersions(a.fullVersion, b.fullVersion));
  for (let i = 1; i < pkgs.length; i++) {
    const p = pkgs[i - 1];
    const q = pkgs[i];
    if (p.name === q.name && p.arch === q.arch && p.fullVersion === q.fullVersion) fail(`duplicate ${q.name} ${q.arch} ${q.fullVersion}`);
  }

  const meta = [
    ['format', 'appliance-forge-catalog 1'],
    ['origin', field(release, 'Origin') ?? 'Debian'],
    ['suite', field(release, 'Suite') ?? suite],
    ['codename', field(release, 'Codename') ?? suite],
    ['version', field(release, 'Version') ?? ''],
    ['component', 'main'],
    ['architecture', 'amd64'],
    ['date', new Date(date).toISOString()],
    ['source', packagesFile],
    ['count', String(pkgs.length)],
  ];
  const lines = meta.map(([k, v]) => `#${k}\t${v}`);
  lines.push(COLUMNS.join('\t'));
  for (const p of pkgs) {
    lines.push([p.name, p.epoch, p.version, p.release, p.arch, p.size, p.installedSize, p.priority, p.section, p.fullName].join('\t'));
  }
  // gzip with Node's zlib writes no time stamp: the same index gives the same bytes.
  const gz = gzipSync(Buffer.from(`${lines.join('\n')}\n`, 'utf8'), { level: 9 });
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.tmp`, gz);
  renameSync(`${out}.tmp`, out);
  console.log(`${out}: ${pkgs.length} packages, ${gz.length} bytes, index date ${meta[7][1]}`);
}

/** apt-helper decompresses whatever apt stored (lz4, xz, gz, zstd or plain). */
function catFile(path) {
  return execFileSync('/usr/lib/apt/apt-helper', ['cat-file', path], { maxBuffer: 512 * 1024 * 1024, encoding: 'utf8' });
}

function toRow(stanza) {
  const f = {};
  for (const line of stanza.split('\n')) {
    if (line.startsWith(' ') || line.startsWith('\t')) continue; // continuation of a multi-line field
    const i = line.indexOf(':');
    if (i > 0) f[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  const name = f.Package;
  const fullVersion = f.Version;
  const arch = f.Architecture;
  if (!name || !fullVersion || !arch || !f.Filename || !f.Size) fail(`incomplete stanza: ${stanza.slice(0, 80)}`);
  for (const v of Object.values(f)) if (/[\t\n]/.test(v)) fail(`tab in a field of ${name}`);
  const { epoch, version, release } = splitVersion(fullVersion);
  const base = f.Filename.slice(f.Filename.lastIndexOf('/') + 1);
  const derived = `${name}_${release ? `${version}-${release}` : version}_${arch}.deb`;
  return {
    name, fullVersion, epoch, version, release, arch,
    size: Number(f.Size),
    installedSize: f['Installed-Size'] ? Number(f['Installed-Size']) : '',
    priority: f.Priority ?? '',
    section: f.Section ?? '',
    fullName: base === derived ? '' : base,
  };
}

/** `[epoch:]upstream[-revision]`: the revision follows the last hyphen (Debian Policy §5.6.12). */
function splitVersion(v) {
  const colon = v.indexOf(':');
  const epoch = colon > 0 ? Number(v.slice(0, colon)) : 0;
  const rest = colon > 0 ? v.slice(colon + 1) : v;
  const dash = rest.lastIndexOf('-');
  return dash > 0 ? { epoch, version: rest.slice(0, dash), release: rest.slice(dash + 1) } : { epoch, version: rest, release: '' };
}

/** dpkg's version order (Debian Policy §5.6.12): epoch, then upstream, then revision. */
function compareVersions(a, b) {
  const x = splitVersion(a);
  const y = splitVersion(b);
  return x.epoch - y.epoch || comparePart(x.version, y.version) || comparePart(x.release, y.release);
}

function order(c) {
  if (c === '~') return -1;
  if (/[A-Za-z]/.test(c)) return c.charCodeAt(0);
  return c.charCodeAt(0) + 256;
}

function comparePart(a, b) {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    // Non-digit runs compare character by character: `~` before everything, even the end; letters before the rest.
    while ((i < a.length && !isDigit(a[i])) || (j < b.length && !isDigit(b[j]))) {
      const ca = i < a.length && !isDigit(a[i]) ? order(a[i]) : 0;
      const cb = j < b.length && !isDigit(b[j]) ? order(b[j]) : 0;
      if (ca !== cb) return ca - cb;
      i++;
      j++;
    }
    let na = '';
    let nb = '';
    while (i < a.length && isDigit(a[i])) na += a[i++];
    while (j < b.length && isDigit(b[j])) nb += b[j++];
    const d = cmpNum(na, nb);
    if (d) return d;
  }
  return 0;
}

function cmpNum(a, b) {
  const x = a.replace(/^0+/, '');
  const y = b.replace(/^0+/, '');
  return x.length - y.length || cmpStr(x, y);
}

function isDigit(c) {
  return c >= '0' && c <= '9';
}

function cmpStr(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function field(text, name) {
  const m = new RegExp(`^${name}: (.*)$`, 'm').exec(text);
  return m ? m[1].trim() : undefined;
}

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(lists|suite|out)$/.exec(argv[i]);
    if (!m || i + 1 >= argv.length) fail(`usage: build-catalog.mjs [--lists DIR] [--suite NAME] [--out FILE] (bad argument ${argv[i]})`);
    o[m[1]] = argv[++i];
  }
  return o;
}

function fail(msg) {
  console.error(`build-catalog: ${msg}`);
  process.exit(1);
}
