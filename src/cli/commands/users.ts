// `appliance-forge users add <login> [--password P] [--admin] [--data DIR] [--json]`: creates a user in
// a data dir and prints its first API key pair (the secret key is shown this once).
import { parseArgs } from 'node:util';
import { createUser } from '../../server';
import { DEFAULT_DATA_DIR, UsageError, type Command } from '../command';

export const users: Command = async (args) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      password: { type: 'string' },
      admin: { type: 'boolean', default: false },
      data: { type: 'string', default: DEFAULT_DATA_DIR },
      json: { type: 'boolean', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  const [sub, login, ...extra] = positionals;
  if (sub !== 'add' || !login || extra.length > 0) throw new UsageError('usage: users add <login> [--password P] [--admin] [--data DIR] [--json]');
  const u = await createUser(values.data, { login, ...(values.password !== undefined ? { password: values.password } : {}), admin: values.admin });
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ login: u.login, publicKey: u.publicKey, secretKey: u.secretKey })}\n`);
  } else {
    process.stdout.write(`user ${u.login} created${values.admin ? ' (administrator)' : ''}\npublic key: ${u.publicKey}\nsecret key: ${u.secretKey}\n`);
  }
  return 0;
};
