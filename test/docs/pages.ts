// The documentation pages the docs tests read, and the lines of a page outside its fenced code blocks.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

/** README.md and every page under docs/, except the shipped design documents and the generated API pages. */
export function pages(): string[] {
  const out = ['README.md'];
  const walk = (dir: string): void => {
    for (const name of readdirSync(path.join(ROOT, dir)).sort()) {
      const rel = `${dir}/${name}`;
      if (rel === 'docs/design' || rel === 'docs/api') continue;
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out;
}

/** The lines of `text` outside fenced code blocks (a fence closes with at least its opening's backticks or tildes). */
export function outsideFences(text: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === undefined) fence = m[1]!.slice(0, 3);
      else if (m[1]!.startsWith(fence)) fence = undefined;
      continue;
    }
    if (fence === undefined) out.push(line);
  }
  return out;
}
