// From the adapters' settings (flags, environment, Action inputs) to a client: the service at
// `url` with an API key pair or a password, or the embedded server (`url` is `embedded`).
import { baseUrlProblem, createClient, type Client, type TraceEntry } from '../client';
import { DEFAULT_DATA_DIR, startEmbedded } from './embedded';
import { UsageError } from './errors';
import { SecretSet } from './secrets';
import { CONNECTION_ENV, type ConnectionSetting } from './settings-env';

/** The `url` (flag, variable, Action input) that asks for the embedded server. */
export const EMBEDDED = 'embedded';

export interface ConnectSettings {
  /** The service's base URL, or EMBEDDED (chooseTarget). */
  readonly url: string;
  readonly user?: string | undefined;
  readonly apiKey?: string | undefined;
  readonly secretKey?: string | undefined;
  readonly password?: string | undefined;
  /** Data folder of the embedded server; default `./.appliance-forge`. */
  readonly dataDir?: string | undefined;
  /** A request trace (`APPLIANCE_FORGE_LOG=debug`): told after each HTTP exchange. */
  readonly onTrace?: ((t: TraceEntry) => void) | undefined;
  /**
   * Where each setting came from, in words (`--password`, `APPLIANCE_FORGE_API_KEY`, `--credentials FILE`,
   * `input password`): a 401 names the source of the credentials it refused, never their values.
   */
  readonly sources?: { readonly [K in ConnectionSetting]?: string } | undefined;
}

export interface Connection {
  readonly client: Client;
  /** The credentials in use, to mask. */
  readonly secrets: SecretSet;
  /** `embedded` when the in-process reference server serves the run. */
  readonly target: 'remote' | 'embedded';
  readonly url: string;
  close(): Promise<void>;
}

/** Settings that cannot work together, or a URL that is none; the message names what is missing. A usage error (exit 2). */
export class ConnectSettingsError extends UsageError {
  static override readonly code = 'E_SETTINGS';
  constructor(message: string) {
    super(message);
    this.name = 'ConnectSettingsError';
  }
}

/**
 * The URL a run goes to, or EMBEDDED: the embedded server serves it when asked by name or when nothing at
 * all is configured. A credential without a URL is an error, never a local run: a CI job whose URL
 * variable is missing must not plan against an empty local service. `given` names where each setting
 * that is set came from (`--user`, `APPLIANCE_FORGE_PASSWORD`, `--credentials FILE`); `how` how to give a URL.
 */
export function chooseTarget(url: string | undefined, given: readonly string[], how: { url: string; embedded: string }): string {
  if (url) return url;
  if (!given.length) return EMBEDDED;
  const names = given.length > 1 ? `${given.slice(0, -1).join(', ')} and ${given.at(-1)!} are` : `${given[0]!} is`;
  throw new ConnectSettingsError(`no service URL: ${names} given, but no URL; give ${how.url}, or ${how.embedded} for the embedded server`);
}

/** What the JSON documents and the Action's outputs name as the target: the URL without user or password, or EMBEDDED. */
export function publicTarget(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url; // not a URL: connecting fails with its own message
  }
  if (!u.username && !u.password) return url;
  u.username = '';
  u.password = '';
  return u.href;
}

export async function connect(s: ConnectSettings): Promise<Connection> {
  const secrets = new SecretSet();
  secrets.add(s.secretKey);
  secrets.add(s.password);
  if (s.url === EMBEDDED) {
    const svc = await startEmbedded(s.dataDir ?? DEFAULT_DATA_DIR);
    secrets.add(svc.credentials.secretKey);
    // The embedded server is this process on loopback: never through a proxy. JSON, which both ends
    // encode and decode faster than XML (the answers decode to the same records): no other program reads them.
    const client = createClient({ url: svc.url, auth: { ...svc.credentials }, proxy: false, format: 'json', ...(s.onTrace ? { onTrace: s.onTrace } : {}) });
    return {
      client, secrets, target: 'embedded', url: svc.url,
      close: async () => {
        await client.close();
        await svc.close();
      },
    };
  }
  const badUrl = baseUrlProblem(s.url);
  if (badUrl) throw new ConnectSettingsError(`the service URL ${badUrl}`);
  if (!s.user) throw new ConnectSettingsError(`a user is needed with a service URL (--user or ${CONNECTION_ENV.user})`);
  let auth: { login: string; publicKey: string; secretKey: string } | { login: string; password: string };
  if (s.apiKey || s.secretKey) {
    if (!s.apiKey || !s.secretKey) throw new ConnectSettingsError('an API key needs both its public key (--api-key) and its secret key (--secret-key)');
    auth = { login: s.user, publicKey: s.apiKey, secretKey: s.secretKey };
  } else if (s.password) {
    auth = { login: s.user, password: s.password };
  } else {
    throw new ConnectSettingsError('credentials are needed with a service URL: --api-key and --secret-key, or --password');
  }
  const client = createClient({ url: s.url, auth, ...(s.onTrace ? { onTrace: s.onTrace } : {}) });
  return { client, secrets, target: 'remote', url: s.url, close: () => client.close() };
}
