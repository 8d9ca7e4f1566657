// The service a command talks to, from its flags, a credentials file and the environment (flags first),
// and the line that says what serves the run: the settings of plan, apply, destroy, list and show.
import { proxyFromEnv, type TraceEntry } from '../client';
import { chooseTarget, connect, ConnectSettingsError, type ConnectSettings, type Connection, EMBEDDED, publicTarget } from '../engine/connect';
import type { SecretSet } from '../engine/secrets';
import { CONNECTION_ENV, CONNECTION_SETTINGS, CREDENTIALS, type ConnectionSetting, type EnvSettings, settingsFromEnv } from '../engine/settings-env';
import { UsageError } from './command';
import { readCredentialsFile } from './credentials-file';
import type { CONNECTION_OPTIONS } from './options';

type Env = Readonly<Record<string, string | undefined>>;

/** The connection flags as parsed (CONNECTION_OPTIONS and DATA_DIR_OPTION). */
export type ConnectionValues = { readonly [K in keyof typeof CONNECTION_OPTIONS | 'data-dir']?: string | undefined };

/**
 * The service a command talks to: the settings of its flags, credentials file and environment, and the
 * target chosen from them (a credential without a URL is a usage error). Credentials join `secrets`;
 * with `trace`, each HTTP exchange is told to it (without the signature: client/trace.ts).
 */
export function serviceSettings(
  values: ConnectionValues, env: Env, secrets: SecretSet, o: { warn: (m: string) => void; trace?: ((line: string) => void) | undefined },
): { settings: ConnectSettings; target: string; urlGiven: boolean } {
  const { settings: given, origins, sources } = connectionSettings(values, env, o.warn);
  let url: string;
  try {
    url = chooseTarget(given.url, origins, { url: `--url URL (or ${CONNECTION_ENV.url})`, embedded: `--url ${EMBEDDED}` });
  } catch (e) {
    if (e instanceof ConnectSettingsError) throw new UsageError(e.message);
    throw e;
  }
  const trace = o.trace;
  const settings = {
    ...given,
    url,
    dataDir: values['data-dir'],
    sources,
    onTrace: trace && ((t: TraceEntry) => trace(`${t.method} ${t.path} ${t.status ?? t.error} ${t.ms}ms`)),
  };
  secrets.add(settings.secretKey);
  secrets.add(settings.password);
  return { settings, target: publicTarget(url), urlGiven: !!given.url };
}

/** Connects, and tells what serves the run (connectionLine). */
export async function openConnection(
  settings: ConnectSettings, env: Env, secrets: SecretSet, o: { debug: (line: string) => void; urlGiven: boolean; target: string },
): Promise<{ conn: Connection; using: string }> {
  const conn = await connect(settings);
  secrets.addAll(conn.secrets.list());
  return { conn, using: connectionLine(conn, settings, env, o) };
}

/**
 * Tells `debug` the proxy a traced run goes through, and returns the line that says what serves the run
 * (`service URL`, or the embedded server and its data folder).
 */
export function connectionLine(
  conn: Connection, settings: ConnectSettings, env: Env, o: { debug: (line: string) => void; urlGiven: boolean; target: string },
): string {
  // The proxy in use (credentials shown as ***); the embedded server is never reached through one.
  if (settings.onTrace && conn.target === 'remote') {
    const noProxy = env.no_proxy ?? env.NO_PROXY;
    for (const p of proxyFromEnv(env)) o.debug(`proxy ${p}${noProxy ? ` (NO_PROXY=${noProxy})` : ''}`);
  }
  return conn.target === 'embedded'
    ? `${o.urlGiven ? `url ${EMBEDDED}` : 'no service URL'}: using the embedded server (${conn.url}, data in ${settings.dataDir ?? './.appliance-forge'})`
    : `service ${o.target}`;
}

/** Each connection setting's flag. */
const FLAGS = { url: 'url', user: 'user', apiKey: 'api-key', secretKey: 'secret-key', password: 'password' } as const satisfies Record<ConnectionSetting, keyof typeof CONNECTION_OPTIONS>;

/**
 * The connection settings and where those other than the URL came from (`--user`, `--credentials FILE`,
 * `APPLIANCE_FORGE_PASSWORD`): flags, then the credentials file given, then the environment; a file's
 * credentials come whole (its password is not mixed with a key pair from the environment).
 */
function connectionSettings(
  values: { readonly [K in keyof typeof CONNECTION_OPTIONS]?: string | undefined },
  env: Env,
  warn: (m: string) => void,
): { settings: EnvSettings; origins: string[]; sources: { [K in ConnectionSetting]?: string } } {
  const file = values.credentials;
  const c = file !== undefined ? readCredentialsFile(file, warn) : undefined;
  const e = settingsFromEnv(env);
  const settings: { [K in ConnectionSetting]?: string } = {};
  const origins = new Set<string>();
  const sources: { [K in ConnectionSetting]?: string } = {};
  for (const k of CONNECTION_SETTINGS) {
    const flag = values[FLAGS[k]];
    const fromEnv = !c || !CREDENTIALS.includes(k) ? e[k] : undefined;
    const [v, origin] = flag ? [flag, `--${FLAGS[k]}`] : c?.[k] ? [c[k], `--credentials ${file}`] : [fromEnv, CONNECTION_ENV[k]];
    if (!v) continue;
    settings[k] = v;
    sources[k] = origin;
    if (k !== 'url') origins.add(origin);
  }
  // A credentials file without a URL asks for a service too, whatever it holds.
  if (file !== undefined && !settings.url) origins.add(`--credentials ${file}`);
  return { settings, origins: [...origins], sources };
}

