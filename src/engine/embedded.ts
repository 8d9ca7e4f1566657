// The embedded reference server, for runs without a service URL: the command line and the Action
// start it in-process with its data in `./.appliance-forge`, and a local user created on first use
// whose credentials are kept in that folder (mode 0600). The folder is checked first, as the server
// checks it (server/data-folder.ts): a link or another user's folder is refused, and so is a
// credentials file that is a link or open to others.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ForgeError, messageOf } from '../errors';
import { createSecretFile, DataFolderError, openDataFolder, readSecretFile } from '../server/data-folder';
import { peerHint } from './peer-packages';

export const DEFAULT_DATA_DIR = '.appliance-forge';
const CREDENTIALS = 'credentials.json';
const LOCAL_LOGIN = 'local';

export interface LocalCredentials {
  readonly login: string;
  readonly publicKey: string;
  readonly secretKey: string;
}

export interface EmbeddedService {
  readonly url: string;
  readonly credentials: LocalCredentials;
  close(): Promise<void>;
}

/** The embedded server could not start (for the Action: the native SQLite module is not installed). */
export class EmbeddedUnavailableError extends ForgeError {
  static readonly code = 'E_EMBEDDED_UNAVAILABLE';
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'EmbeddedUnavailableError';
  }
}

/**
 * Writes `<dir>/.gitignore` holding `*` (unless one is there): the folder holds credentials.json and
 * secret.key, and usually sits in a project's working tree, where nothing else would keep them out of git.
 */
export function ignoreInGit(dir: string): void {
  const file = path.join(dir, '.gitignore');
  try {
    writeFileSync(file, '# written by appliance-forge: this folder holds keys and server data\n*\n', { flag: 'wx', mode: 0o644 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

export async function startEmbedded(dataDir = DEFAULT_DATA_DIR): Promise<EmbeddedService> {
  const what = 'the embedded server (no service URL given)';
  // Loaded on demand: the server, its framework and SQLite are needed only without a URL.
  let server: typeof import('../server');
  try {
    server = await import('../server/index.js');
  } catch (e) {
    throw new EmbeddedUnavailableError(
      peerHint(e, what) ?? `the embedded server cannot load (${messageOf(e).split('\n')[0]}); give a service URL, or install the package's dependencies`,
      e,
    );
  }
  try {
    return await openEmbedded(server, dataDir);
  } catch (e) {
    // On Node < 22.13 without better-sqlite3 the store cannot open: name the package to install.
    const hint = peerHint(e, what);
    throw hint ? new EmbeddedUnavailableError(hint, e) : e;
  }
}

async function openEmbedded(server: typeof import('../server'), dataDir: string): Promise<EmbeddedService> {
  const dir = openDataFolder(dataDir);
  ignoreInGit(dir);
  const file = path.join(dir, CREDENTIALS);
  const kept = readSecretFile(file);
  let credentials: LocalCredentials;
  if (kept !== undefined) {
    credentials = JSON.parse(kept) as LocalCredentials;
  } else {
    const u = await server.createUser(dir, { login: LOCAL_LOGIN });
    credentials = { login: u.login, publicKey: u.publicKey, secretKey: u.secretKey };
    if (!createSecretFile(file, `${JSON.stringify(credentials, null, 2)}\n`)) throw new DataFolderError(file, 'appeared while the local user was being created');
  }
  const running = await server.startServer({ dataDir: dir });
  return { url: running.url, credentials, close: () => running.close() };
}
