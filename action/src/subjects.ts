// The `subject-checksums` output: the digests of the images an apply made or reused, one
// `<sha256>  <name>` line each (the `sha256sum` format), in a file that the `subject-checksums` input
// of actions/attest-build-provenance takes. Names are the files in output-dir when the images were
// downloaded (so `sha256sum -c` runs there), else the service's file names.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ImageResult, SavedImage } from '../../src/engine';

/** One line per image (two builders of one image: one line); empty when no image has a digest. */
export function subjectLines(images: readonly ImageResult[], files: readonly SavedImage[]): string[] {
  const lines = new Map<string, string>();
  for (const i of images) {
    if (!i.sha256 || lines.has(i.imageUri)) continue;
    const saved = files.find((f) => f.imageUri === i.imageUri);
    // A line of sha256sum's format holds no new line; a backslash would start its escaped form.
    const name = (saved ? path.basename(saved.path) : (i.fileName ?? i.imageUri)).replace(/[\r\n\\]/g, '_');
    lines.set(i.imageUri, `${i.sha256.toLowerCase()}  ${name}`);
  }
  return [...lines.values()];
}

/** Writes the file in a new folder under RUNNER_TEMP (the OS temp folder outside a runner); returns its folder and path. */
export function writeSubjectChecksums(lines: readonly string[], env: NodeJS.ProcessEnv = process.env): { dir: string; file: string } {
  const base = env.RUNNER_TEMP || tmpdir();
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(path.join(base, 'appliance-forge-subjects-'));
  const file = path.join(dir, 'subjects.sha256');
  writeFileSync(file, lines.map((l) => `${l}\n`).join(''), { mode: 0o644, flag: 'wx' });
  return { dir, file };
}
