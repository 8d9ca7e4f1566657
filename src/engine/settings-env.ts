// Where every tool finds the service when it is not told: the APPLIANCE_FORGE_* variables, read the same
// way by the command line and the Pulumi provider (a light module: the provider loads no server for it).

/** The connection settings and the environment variable of each. */
export const CONNECTION_ENV = {
  url: 'APPLIANCE_FORGE_URL',
  user: 'APPLIANCE_FORGE_USER',
  apiKey: 'APPLIANCE_FORGE_API_KEY',
  secretKey: 'APPLIANCE_FORGE_SECRET_KEY',
  password: 'APPLIANCE_FORGE_PASSWORD',
} as const;

export type ConnectionSetting = keyof typeof CONNECTION_ENV;
export type EnvSettings = { readonly [K in ConnectionSetting]?: string };

export const CONNECTION_SETTINGS = Object.keys(CONNECTION_ENV) as ConnectionSetting[];

/** The settings the environment gives; an empty variable is unset. */
export function settingsFromEnv(env: Readonly<Record<string, string | undefined>>): EnvSettings {
  const out: { [K in ConnectionSetting]?: string } = {};
  for (const k of CONNECTION_SETTINGS) {
    const v = env[CONNECTION_ENV[k]];
    if (v !== undefined && v !== '') out[k] = v;
  }
  return out;
}

/** The credential settings: they come whole from one place (a password is not mixed with another's key pair). */
export const CREDENTIALS: readonly ConnectionSetting[] = ['apiKey', 'secretKey', 'password'];
