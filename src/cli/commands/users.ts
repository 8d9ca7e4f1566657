// `appliance-forge users add <login> [--password P] [--admin] [--data-dir DIR] [--json]`: creates a user in
// a data dir and prints its first API key pair (the secret key is shown this once).
import { createUser, ServerConfigError } from '../../server';
import { ignoreInGit } from '../../engine/embedded';
import { DEFAULT_DATA_DIR, UsageError, type Command, type CommandModule } from '../command';
import { HELP_OPTION, parseCommandArgs } from '../options';

const HELP = `usage: appliance-forge users add LOGIN [options]

Creates a user in a server's data dir, or in a farm's database, and prints its first API key pair
(the secret key is shown this once).

options:
  -p, --password PW          the user's password (for Basic authentication)
      --admin                an administrator
      --data-dir DIR         the server's data (default ${DEFAULT_DATA_DIR}; --data is a deprecated alias)
      --database-url URL     postgres://…: the farm's database (or APPLIANCE_FORGE_DATABASE_URL)
      --secret-key-file FILE the farm's secret key (default <data-dir>/secret.key)
      --json                 {"login","publicKey","secretKey"} on one line
  -h, --help
`;

const OPTIONS = {
  ...HELP_OPTION,
  password: { type: 'string', short: 'p' },
  admin: { type: 'boolean', default: false },
  'data-dir': { type: 'string', default: DEFAULT_DATA_DIR },
  'database-url': { type: 'string' },
  'secret-key-file': { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

const run: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, { usage: HELP, positionals: true, warn: (m) => process.stderr.write(`appliance-forge users: warning: ${m}\n`) });
  const [sub, login, ...extra] = positionals;
  if (sub !== 'add' || !login || extra.length > 0) throw new UsageError(HELP);
  const dataDir = values['data-dir'];
  const databaseUrl = values['database-url'] ?? (process.env.APPLIANCE_FORGE_DATABASE_URL || undefined);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new UsageError('--database-url must be a postgres:// URL (APPLIANCE_FORGE_DATABASE_URL too)');
  const u = await createUser(dataDir, {
    login,
    password: values.password,
    admin: values.admin,
    databaseUrl,
    secretKeyFile: values['secret-key-file'],
  }).catch((e: unknown) => {
    if (e instanceof ServerConfigError) throw new UsageError(e.message);
    throw e;
  });
  ignoreInGit(dataDir);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ login: u.login, publicKey: u.publicKey, secretKey: u.secretKey })}\n`);
  } else {
    process.stdout.write(`user ${u.login} created${values.admin ? ' (administrator)' : ''}\npublic key: ${u.publicKey}\nsecret key: ${u.secretKey}\n`);
  }
  return 0;
};

export const users: CommandModule = { run, help: HELP, options: OPTIONS, words: ['add'] };
