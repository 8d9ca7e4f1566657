// An image's SBOM as the console shows it: the packages of its SPDX document (name, version, declared
// license, purl) and how many packages each license covers. Read through the same service as the API's
// SBOM route, bounded in size, and kept for the few images looked at last (keyed by the file's digest).
import type { Readable } from 'node:stream';
import type { FileResult } from '../http/handler';

export interface SbomPackage {
  name: string;
  version: string;
  license: string;
  purl: string;
}

export interface SbomTable {
  packages: SbomPackage[];
  /** License expression → package count, most common first. */
  licenses: Array<[string, number]>;
}

/** Larger SPDX documents are not shown (the file still downloads through the API). */
const MAX_SBOM_BYTES = 64 * 1024 * 1024;
const KEPT = 8;
const kept = new Map<string, SbomTable>();

async function readAll(stream: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of stream as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > limit) {
      stream.destroy();
      throw new Error(`the SBOM is larger than ${limit} bytes`);
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The package table of an SPDX 2.3 JSON document (the image's own entry left out). */
export function spdxTable(doc: unknown): SbomTable {
  const pkgs = (doc as { packages?: unknown }).packages;
  const packages: SbomPackage[] = [];
  for (const p of Array.isArray(pkgs) ? (pkgs as Array<Record<string, unknown>>) : []) {
    if (p.primaryPackagePurpose === 'OPERATING_SYSTEM') continue;
    const refs = Array.isArray(p.externalRefs) ? (p.externalRefs as Array<Record<string, unknown>>) : [];
    const purl = refs.find((r) => r.referenceType === 'purl');
    packages.push({ name: text(p.name), version: text(p.versionInfo), license: text(p.licenseDeclared) || 'NOASSERTION', purl: text(purl?.referenceLocator) });
  }
  packages.sort((a, b) => a.name.localeCompare(b.name));
  const counts = new Map<string, number>();
  for (const p of packages) counts.set(p.license, (counts.get(p.license) ?? 0) + 1);
  return { packages, licenses: [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])) };
}

/** The table of an SBOM file (the API service's FileResult of its `spdx` format). */
export async function sbomTable(file: FileResult): Promise<SbomTable> {
  const hit = kept.get(file.etag);
  if (hit) return hit;
  if (file.size > MAX_SBOM_BYTES) throw new Error(`the SBOM is larger than ${MAX_SBOM_BYTES} bytes`);
  const table = spdxTable(JSON.parse(await readAll(await file.open(), MAX_SBOM_BYTES)) as unknown);
  if (kept.size >= KEPT) kept.delete(kept.keys().next().value!);
  kept.set(file.etag, table);
  return table;
}

/** The packages whose name, version, license or purl contains `q` (case-insensitive); all for an empty one. */
export function searchPackages(table: SbomTable, q: string): SbomPackage[] {
  const needle = q.trim().toLowerCase();
  if (!needle) return table.packages;
  return table.packages.filter((p) => p.name.toLowerCase().includes(needle) || p.version.toLowerCase().includes(needle) || p.license.toLowerCase().includes(needle) || p.purl.toLowerCase().includes(needle));
}
