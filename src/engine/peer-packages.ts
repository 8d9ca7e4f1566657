// The server's framework (fastify) and the native SQLite module (better-sqlite3, for Node < 22.13)
// are optional peer dependencies: a client-only or Pulumi install does not get them. When the
// server is asked for without them, say which package to install instead of a module-resolution trace.
import { ownPackageJson } from '../package-json';

/** The optional peer dependency a failed import (anywhere in its cause chain) was missing. */
export function missingPeer(e: unknown): string | undefined {
  const peers = ownPackageJson(__dirname)?.peerDependencies ?? {};
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const m = /Cannot find (?:module|package) '([^']+)'/.exec(cur instanceof Error ? cur.message : '');
    const name = m?.[1]?.match(/^(@[^/]+\/[^/]+|[^/]+)/)?.[1];
    if (name && Object.prototype.hasOwnProperty.call(peers, name)) return name;
  }
  return undefined;
}

/** `what needs the package X: npm install X`, when `e` is a missing optional peer; else undefined. */
export function peerHint(e: unknown, what: string): string | undefined {
  const name = missingPeer(e);
  if (!name) return undefined;
  const sqlite = name === 'better-sqlite3' ? ` (on Node ${process.versions.node}; Node 22.13 or later has node:sqlite built in)` : '';
  return `${what} needs the package ${name}${sqlite}, an optional peer dependency of appliance-forge: npm install ${name}`;
}
