// Finding a program the way spawn does (PATH), plus the sbin directories a non-login root shell may lack.
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';

/** PATH with /usr/sbin and /sbin (mmdebstrap, mke2fs, chpasswd live there). */
export function sbinPath(): string {
  return `${process.env.PATH ?? ''}:/usr/sbin:/sbin`;
}

/** The absolute path of an executable `tool` found in `searchPath` (or the tool itself when absolute), or undefined. */
export function findOnPath(tool: string, searchPath: string = process.env.PATH ?? ''): string | undefined {
  const candidates = tool.includes('/') ? [tool] : searchPath.split(path.delimiter).filter(Boolean).map((d) => path.join(d, tool));
  return candidates.find((c) => {
    try {
      accessSync(c, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** A host tool of data/host-tools.json is there: a program on PATH (with sbin), or a file given by absolute path (a keyring). */
export function hostToolPresent(tool: string): boolean {
  return tool.startsWith('/') ? existsSync(tool) : findOnPath(tool, sbinPath()) !== undefined;
}
