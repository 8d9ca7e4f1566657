// The platform tool's credentials file (hammr's `credentials.yml` / `credentials.json`, `-c FILE`):
// `url`, `user`, and `password` or the key pair `publickey` / `secretkey`. YAML reads both forms.
import { readFileSync, statSync } from 'node:fs';
import { parse } from 'yaml';
import { UsageError } from './command';

export interface FileCredentials {
  readonly url?: string;
  readonly user?: string;
  readonly password?: string;
  readonly apiKey?: string;
  readonly secretKey?: string;
}

const FIELDS: Readonly<Record<string, keyof FileCredentials | null>> = {
  url: 'url', user: 'user', password: 'password', publickey: 'apiKey', secretkey: 'secretKey',
  // The platform tool's TLS switch: this client always verifies certificates.
  acceptAutoSigned: null,
};

/** Reads the file; `warn` is told about unknown keys and about a file others can read. */
export function readCredentialsFile(file: string, warn: (message: string) => void): FileCredentials {
  let data: unknown;
  try {
    data = parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`--credentials ${file}: ${code ?? 'not YAML or JSON'}`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new UsageError(`--credentials ${file}: expected a mapping of url, user, password or publickey/secretkey`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if (!Object.prototype.hasOwnProperty.call(FIELDS, k)) {
      warn(`${file}: unknown key "${k}" (ignored)`);
      continue;
    }
    const to = FIELDS[k];
    if (to === null) continue;
    if (typeof v !== 'string' || v === '') throw new UsageError(`--credentials ${file}: ${k} must be a text value`);
    out[to!] = v;
  }
  if ((statSync(file).mode & 0o077) !== 0) warn(`${file} can be read by other users: chmod 600 it`);
  return out;
}
