// Where a resource's calls go and with which credentials: the per-resource `connection` input when
// given, else the provider configuration (`appliance-forge:url`, `:user`, `:apiKey`, `:secretKey`, `:password`),
// else the APPLIANCE_FORGE_* variables of the command line.
// Credentials live only here, in memory of the host process: never in the serialized provider.
import { createClient, type Client } from '../../src/client';
import type { ApiError } from '../../src/client/errors';
import { ForgeError } from '../../src/errors';
import { ProviderError } from './errors';
import { CONNECTION_ENV, CONNECTION_SETTINGS, CREDENTIALS, settingsFromEnv, type ConnectionSetting } from '../../src/engine/settings-env';
import { HTTP_URL_PATTERN } from '../../src/model/field-rules';
import type { Inputs } from './inputs';
import { isRecord, type Props } from './plain';

export const CONFIG_NAMESPACE = 'appliance-forge';

/** The provider configuration as read by `configure` (design/pulumi-and-action.md, "Configuration"). */
export type Settings = { [K in ConnectionSetting]?: string | undefined };

/** The part of the host's `Config` that `configure` needs. */
export interface ConfigReader { get(key: string): string | undefined }

/**
 * The provider's settings: the stack configuration, else the APPLIANCE_FORGE_* variables as the command
 * line reads them (src/engine/settings-env.ts). Credentials come whole from one place: a configured key
 * or password is never mixed with one from the environment. They stay in this process's memory only.
 */
export function readSettings(config: ConfigReader | undefined, env: NodeJS.ProcessEnv = process.env): Settings {
  const get = (k: ConnectionSetting): string | undefined => configured(config, k);
  const e = settingsFromEnv(env);
  const credentialsConfigured = credentialsFrom(config) === 'config';
  const pick = (k: ConnectionSetting): string | undefined =>
    CREDENTIALS.includes(k) && credentialsConfigured ? get(k) : get(k) ?? e[k];
  return Object.fromEntries(CONNECTION_SETTINGS.map((k) => [k, pick(k)]));
}

function configured(config: ConfigReader | undefined, k: ConnectionSetting): string | undefined {
  const v = config?.get(`${CONFIG_NAMESPACE}:${k}`);
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Where a resource's credentials come from: the stack configuration, the environment, or its `connection` input. */
export type CredentialsFrom = 'config' | 'env' | 'connection';

/** `config` when the stack configuration sets any credential (they then all come from it), else `env`. */
export function credentialsFrom(config: ConfigReader | undefined): 'config' | 'env' {
  return CREDENTIALS.some((k) => configured(config, k) !== undefined) ? 'config' : 'env';
}

/**
 * The service refused the credentials (401): the error says at which URL, as which user, and where the
 * credentials it sent came from (the configuration key or the variable to fix), never their values.
 */
export function refusedCredentials(e: ApiError, s: Settings, from: CredentialsFrom): ProviderError {
  const keys: ConnectionSetting[] = s.apiKey && s.secretKey ? ['apiKey', 'secretKey'] : ['password'];
  const where = from === 'connection'
    ? "the resource's `connection` input"
    : from === 'config'
      ? `the stack configuration (${keys.map((k) => `${CONFIG_NAMESPACE}:${k}`).join(', ')})`
      : `the environment (${keys.map((k) => CONNECTION_ENV[k]).join(', ')})`;
  const credentials = `the ${keys.length === 2 ? 'API key pair' : 'password'} from ${where}`;
  return new ProviderError('auth', `${e.message}: the service at ${s.url ?? '?'} refused user "${s.user ?? '?'}" with ${credentials}`, {
    url: s.url, user: s.user, credentials,
  }, { cause: e });
}

/** `check` for the optional `connection` input; the same fields as the configuration. */
export function checkConnection(r: Inputs): Settings | string | undefined {
  return r.object('connection', (c) => {
    const s: Settings = {
      url: c.string('url', { required: true, pattern: HTTP_URL_PATTERN, hint: 'must be an http(s) URL with the service path, e.g. https://host/api' }),
      user: c.string('user', { required: true }),
      apiKey: c.string('apiKey'),
      secretKey: c.string('secretKey'),
      password: c.string('password'),
    };
    if (s.apiKey !== undefined && s.secretKey === undefined) c.fail('secretKey', 'secretKey is required with apiKey');
    if (s.secretKey !== undefined && s.apiKey === undefined) c.fail('apiKey', 'apiKey is required with secretKey');
    if (s.apiKey === undefined && s.password === undefined) c.fail('apiKey', 'give apiKey and secretKey, or password');
    return s;
  });
}

/** The endpoint of a resource: its `connection` input (outputs keep it, as a secret) or the provider's settings. */
export function settingsFor(settings: Settings | undefined, props: Props): Settings {
  const c = props.connection;
  if (isRecord(c)) {
    const s = (k: string): string | undefined => (typeof c[k] === 'string' && c[k] !== '' ? c[k] : undefined);
    return { url: s('url'), user: s('user'), apiKey: s('apiKey'), secretKey: s('secretKey'), password: s('password') };
  }
  return settings ?? {};
}

/** Thrown when neither the resource nor the provider says where or as whom to connect. */
export class ConnectionConfigError extends ForgeError {
  static readonly code = 'E_CONNECTION_CONFIG';
  constructor(missing: ConnectionSetting) {
    super(
      `appliance-forge: ${missing} is not set: run \`pulumi config set ${CONFIG_NAMESPACE}:${missing}\`` +
        ` (--secret for keys and passwords), set ${CONNECTION_ENV[missing]}, or give the resource a \`connection\``,
    );
    this.name = 'ConnectionConfigError';
  }
}

export function connect(s: Settings): Client {
  if (!s.url) throw new ConnectionConfigError('url');
  if (!s.user) throw new ConnectionConfigError('user');
  const auth =
    s.apiKey && s.secretKey
      ? { login: s.user, publicKey: s.apiKey, secretKey: s.secretKey }
      : s.password
        ? { login: s.user, password: s.password }
        : undefined;
  if (!auth) throw new ConnectionConfigError('apiKey');
  return createClient({ url: s.url, auth, format: 'json', userAgent: 'appliance-forge-pulumi' });
}
