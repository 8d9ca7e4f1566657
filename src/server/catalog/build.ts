// A catalog data file from a Debian index (src/debian), with ids kept from the previous catalog:
// a (name, arch) keeps its id, a new one gets the next id never given out, a vanished one keeps its id
// reserved (`#retired`). Used by scripts/build-catalog.mjs and by the server's refresh; the same index
// and previous catalog always give the same bytes.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { packageKey, parseVersion, type IndexPackage, type MergedIndex } from '../../debian';
import { DATA_COLUMNS, FORMAT, type CatalogData, type RetiredId } from './data-file';
import { DEFAULT_PLATFORM } from '../../model/platforms';

/** The file content, before gzip (the caller compresses: off the event loop in a running server). */
export function buildCatalogText(index: MergedIndex, previous: CatalogData | undefined): { text: Buffer; count: number; added: number; retired: number } {
  const ids = new Map<string, number>();
  if (previous) {
    // Format 1 may hold several rows of a name: its latest row's id is the one users have seen as current.
    for (const e of previous.packages) if (e.latest) ids.set(packageKey(e.name, e.arch), e.id);
    for (const r of previous.retired) if (!ids.has(packageKey(r.name, r.arch))) ids.set(packageKey(r.name, r.arch), r.id);
  }
  let nextId = previous?.nextId ?? 1;
  const current = [...index.packages.values()].sort((a, b) => cmp(a.name, b.name) || cmp(a.arch, b.arch));
  let added = 0;
  const rows = current.map((p) => {
    const key = packageKey(p.name, p.arch);
    let id = ids.get(key);
    if (id === undefined) {
      id = nextId++;
      added++;
    }
    ids.delete(key);
    return row(id, p);
  });
  const retired: RetiredId[] = [...ids].map(([key, id]) => {
    const [name, arch] = key.split('\t') as [string, string];
    return { id, name, arch };
  });
  retired.sort((a, b) => a.id - b.id);

  const main = index.releases[0]!;
  const date = index.releases.map((r) => r.date).sort().at(-1)!;
  const meta: Array<[string, string]> = [
    ['format', FORMAT],
    ['origin', main.origin || 'Debian'],
    ['suite', main.suite],
    ['codename', main.codename],
    ['version', main.version],
    ['component', 'main'],
    ['architecture', DEFAULT_PLATFORM.debianArch],
    // Packages files carry no build date: the newest Release `Date` stands for every package.
    ['date', date],
    ['source', index.sources.join(' ')],
    ['count', String(rows.length)],
    ['nextId', String(nextId)],
  ];
  const lines = meta.map(([k, v]) => `#${k}\t${v}`);
  for (const r of retired) lines.push(`#retired\t${r.id}\t${r.name}\t${r.arch}`);
  lines.push(`id\t${DATA_COLUMNS.join('\t')}`, ...rows);
  return { text: Buffer.from(`${lines.join('\n')}\n`, 'utf8'), count: rows.length, added, retired: retired.length };
}

/** gzip level 9 in libuv's thread pool; Node's zlib writes no time stamp: the same text gives the same bytes. */
export function gzipCatalog(text: Buffer): Promise<Buffer> {
  return promisify(gzip)(text, { level: 9 });
}

/** Writes `gz` to `file` through a temporary file and a rename: a reader sees the old file or the new one. */
export function writeCatalogFile(file: string, gz: Buffer): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, gz, { flush: true });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

function row(id: number, p: IndexPackage): string {
  const v = parseVersion(p.version);
  const base = p.filename.slice(p.filename.lastIndexOf('/') + 1);
  const derived = `${p.name}_${v.revision ? `${v.upstream}-${v.revision}` : v.upstream}_${p.arch}.deb`;
  return [id, p.name, v.epoch, v.upstream, v.revision, p.arch, p.size, p.installedSize ?? '', p.priority, p.section, base === derived ? '' : base].join('\t');
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
