// The platform tool's credentials file (hammr's `credentials.yml` / `credentials.json`, `-c FILE`):
// `url`, `user`, and `password` or the key pair `publickey` / `secretkey`. YAML reads both forms.
import { statSync } from 'node:fs';
import { parseYaml } from '../engine/parse';
import { ProblemList } from '../engine/problems';
import { readTextFile } from '../engine/text-file';
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
  const read = readTextFile(file);
  if ('problem' in read) throw new UsageError(`--credentials ${file}: ${read.problem}`);
  const problems = new ProblemList(file);
  const { doc } = parseYaml(read.text, problems, { quote: false });
  const first = problems.items[0];
  if (first) throw new UsageError(`--credentials ${first.file}:${first.line}:${first.column}: ${first.message}`);
  const data: unknown = doc.toJS();
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
