// The documentation's links: every relative link of README.md and docs/**/*.md names a file or folder that
// exists, and every #anchor names a heading of its target page, by GitHub's slug rule. External links are
// not fetched (the suite runs without the internet): they must only be well-formed http(s) URLs.
// docs/design/ (shipped input documents) and docs/api/ (generated output) are not read.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { outsideFences, pages, ROOT } from './pages';

const root = ROOT;

/** Pages written by a generator that another check owns. A link to one of them is skipped while the file is
 *  absent (the generator may not have run in this checkout); once it exists, the link is checked as any other. */
const GENERATED = new Set(['docs/cli.md', 'docs/action.md', 'docs/api/README.md']);

/** The page's lines outside fenced code blocks, with inline code spans blanked out. */
function prose(text: string): string[] {
  return outsideFences(text).map((line) => line.replace(/`+[^`]*`+/g, (code) => ' '.repeat(code.length)));
}

/** GitHub's anchor of a heading: the rendered text lowercased, punctuation dropped (hyphens, underscores and
 *  spaces stay), each space a hyphen; a repeated slug gets -1, -2, … in order of appearance. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/<[^>]+>/g, '') // inline HTML
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\- _]/gu, '').replace(/ /g, '-');
}

function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of outsideFences(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every link target of a page: inline links and images `[text](target "title")`, and reference definitions. */
function links(text: string): string[] {
  const out: string[] = [];
  for (const line of prose(text)) {
    for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]!.replace(/^<|>$/g, ''));
    const def = /^\s{0,3}\[[^\]]+\]:\s+(\S+)/.exec(line);
    if (def) out.push(def[1]!);
  }
  return out;
}

/** What is wrong with one link of `page`, or undefined when it resolves (or names an absent generated page). */
function problem(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    if (!/^https?:/i.test(target)) return `${target}: not an http(s) link`;
    try {
      const url = new URL(target);
      return url.hostname.includes('.') ? undefined : `${target}: no host`;
    } catch {
      return `${target}: not a URL`;
    }
  }
  const hash = target.indexOf('#');
  const file = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const fragment = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const resolved = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
  if (resolved.startsWith('../') || path.posix.isAbsolute(resolved)) return `${target}: outside the repository`;
  if (!existsSync(path.join(root, resolved))) return GENERATED.has(resolved) ? undefined : `${target}: no file ${resolved}`;
  if (fragment === undefined) return undefined;
  if (!resolved.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
  const known = anchors(readFileSync(path.join(root, resolved), 'utf8'));
  return known.has(fragment) ? undefined : `${target}: no heading #${fragment} in ${resolved}`;
}

describe('documentation links', () => {
  it('reads the README and the docs pages', () => {
    const all = pages();
    expect(all).toContain('README.md');
    expect(all).toContain('docs/client.md');
    expect(all.some((p) => p.startsWith('docs/design/') || p.startsWith('docs/api/'))).toBe(false);
  });

  it.each(pages())('%s: every link resolves', (page) => {
    const text = readFileSync(path.join(root, page), 'utf8');
    const bad = links(text).flatMap((target) => problem(page, target) ?? []);
    expect(bad).toEqual([]);
  });

  it('the README links to every docs page', () => {
    const readme = links(readFileSync(path.join(root, 'README.md'), 'utf8'));
    const missing = pages().filter((p) => p.startsWith('docs/') && !readme.includes(p));
    expect(missing).toEqual([]);
  });

  it('the README is at most 300 lines', () => {
    const lines = readFileSync(path.join(root, 'README.md'), 'utf8').replace(/\n$/, '').split('\n');
    expect(lines.length).toBeLessThanOrEqual(300);
  });
});

describe('the link checker', () => {
  it('slugs headings as GitHub does, duplicates numbered', () => {
    expect(slug('Running a build farm')).toBe('running-a-build-farm');
    expect(slug('`serve` flags')).toBe('serve-flags');
    expect(slug('What an image leaves out')).toBe('what-an-image-leaves-out');
    expect(slug('Node and the host\'s tools')).toBe('node-and-the-hosts-tools');
    expect(slug('Links: [a page](x.md) & more')).toBe('links-a-page--more');
    expect([...anchors('# A\n## A\n```\n# not a heading\n```\n### A\n')]).toEqual(['a', 'a-1', 'a-2']);
  });

  it('finds broken files and anchors, and skips only absent generated pages', () => {
    expect(problem('docs/x.md', 'client.md#error-codes')).toBeUndefined();
    expect(problem('docs/x.md', 'client.md#no-such-heading')).toMatch(/no heading/);
    expect(problem('docs/x.md', 'nowhere.md')).toMatch(/no file docs\/nowhere\.md/);
    expect(problem('README.md', 'examples/local.yml')).toBeUndefined();
    expect(problem('README.md', '../outside.md')).toMatch(/outside/);
    expect(problem('README.md', 'https://github.com/pulumi/pulumi/issues/16175')).toBeUndefined();
    expect(problem('README.md', 'https://')).toMatch(/not a URL|no host/);
    expect(problem('README.md', 'ftp://example.org/x')).toMatch(/not an http/);
    for (const generated of GENERATED) {
      const rel = path.posix.relative('docs', generated);
      if (!existsSync(path.join(root, generated))) expect(problem('docs/x.md', rel)).toBeUndefined();
    }
  });

  it('reads links outside code only', () => {
    expect(links('[a](a.md) `[b](b.md)`\n```\n[c](c.md)\n```\n[d]: d.md\n')).toEqual(['a.md', 'd.md']);
  });
});
