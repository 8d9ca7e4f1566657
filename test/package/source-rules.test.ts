// Rules the sources keep, read from the files themselves: comments cite only what the package ships
// (docs/, never an issue tracker's numbers), control characters are checked by the model's text rule
// (src/model/text-rules.ts) rather than by regexes that need a lint suppression, and optional fields
// pass through whole rather than relayed by conditional spreads (a bound, not a target). The image
// builder (src/imaging) keeps its files short, and the rest of the package reaches it only through its
// two faces: src/imaging (index.ts) and src/imaging/boot (the boot check).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist') out.push(...sources(rel));
    } else if (/\.(ts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) {
      out.push(rel);
    }
  }
  return out;
}

const shipped = ['src', 'provider', 'action/src'].flatMap(sources);
const everything = [...shipped, ...['test', 'scripts', 'bench'].flatMap(sources)];
const read = (f: string): string => readFileSync(path.join(ROOT, f), 'utf8');

/** Lines of `files` matching `re`, as `file:line: text`. */
function hits(files: readonly string[], re: RegExp): string[] {
  return files.flatMap((f) => read(f).split('\n').flatMap((line, i) => (re.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])));
}

describe('source rules', () => {
  it('reads the tree it checks', () => {
    expect(shipped.length).toBeGreaterThan(150);
    expect(shipped).toContain('src/model/text-rules.ts');
  });

  it('no comment or test name cites an issue number', () => {
    const citation = new RegExp(String.raw`\b[Ii]ssues? #?\d+\b`);
    expect(['(issue 12, defect 4)', 'Issue 9 end to end', 'issues #3'].every((t) => citation.test(t))).toBe(true);
    // This file holds the samples above, on purpose.
    expect(hits(everything.filter((f) => f !== 'test/package/source-rules.test.ts'), citation)).toEqual([]);
  });

  it('no control-character regex needs a lint suppression', () => {
    const rule = ['no', 'control', 'regex'].join('-');
    expect(hits(everything, new RegExp(rule))).toEqual([]);
  });

  it('conditional spreads of optional fields stay few', () => {
    const spreads = hits(shipped, /\.\.\.\(.*\?.*:\s*\{\s*\}\s*\)/);
    expect(spreads.length).toBeGreaterThan(0);
    expect(spreads.length).toBeLessThanOrEqual(60);
  });

  it('no file of the image builder is longer than 300 lines', () => {
    const long = shipped
      .filter((f) => f.startsWith('src/imaging/'))
      .map((f) => ({ f, lines: read(f).split('\n').length - (read(f).endsWith('\n') ? 1 : 0) }))
      .filter(({ lines }) => lines > 300)
      .map(({ f, lines }) => `${f}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it('outside the image builder, only its faces are imported: src/imaging and src/imaging/boot', () => {
    expect(deepImagingImports('src/server/x.ts', ["import { a } from '../imaging';", "import { b } from '../imaging/boot';", "import type { c } from '../imaging/os/cache';", "const d = import('../imaging/disk/build.js');"].join('\n'))).toEqual([
      'src/server/x.ts → src/imaging/os/cache',
      'src/server/x.ts → src/imaging/disk/build',
    ]);
    expect(shipped.filter((f) => !f.startsWith('src/imaging/')).flatMap((f) => deepImagingImports(f, read(f)))).toEqual([]);
  });
});

/** Module specifiers of a source text: import/export … from, side-effect imports, import(), require(). */
function specifiers(text: string): string[] {
  const patterns = [/\b(?:import|export)\s+(?:type\s+)?[^'";]*?\sfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  return patterns.flatMap((re) => [...text.matchAll(re)].map((m) => m[1]!));
}

/** The imports of `file` that reach into src/imaging past its two faces, as `file → target`. */
function deepImagingImports(file: string, text: string): string[] {
  const faces = new Set(['src/imaging', 'src/imaging/index', 'src/imaging/boot', 'src/imaging/boot/index']);
  return specifiers(text)
    .filter((s) => s.startsWith('.'))
    .map((s) => path.relative(ROOT, path.resolve(ROOT, path.dirname(file), s)).replace(/\.js$/, ''))
    .filter((target) => target.startsWith('src/imaging/') && !faces.has(target))
    .map((target) => `${file} → ${target}`);
}
