// `appliance-forge migrate --from DATA_DIR --to postgres://… [--blob-store s3://…]` (HELP below): a data
// folder's users, records and files into a farm's database and bucket, ids and keys kept.
import { migrateDataFolder, ServerConfigError } from '../../server';
import { UsageError, type Command, type CommandModule } from '../command';
import { HELP_OPTION, parseCommandArgs, QUIET_OPTION } from '../options';

const HELP = `usage: appliance-forge migrate --from DATA_DIR --to postgres://… [--blob-store s3://…] [options]

Copies a server's data folder (its users, records and files) into a build farm's PostgreSQL database
and S3 bucket, ids, dates and blob keys kept: every URI, ETag and download stays valid. Stop the server
first. The database must be empty; nothing is written to it unless everything is copied. The secrets
stay sealed with the folder's key: give every node of the farm --secret-key-file DATA_DIR/secret.key.

options:
      --from DIR              the data folder (its forge.db, secret.key and files)
      --to URL                postgres://…: the farm's database (or APPLIANCE_FORGE_DATABASE_URL)
      --blob-store URL        s3://BUCKET[/PREFIX][?endpoint=…]: the farm's bucket (or APPLIANCE_FORGE_BLOB_STORE);
                              without it the files stay in the folder, which one node then serves
      --json                  {"users","records","blobs","bytes","secretKeyFile"} on one line
  -q, --quiet                 no progress lines on stderr
  -h, --help
`;

const OPTIONS = {
  ...HELP_OPTION,
  ...QUIET_OPTION,
  from: { type: 'string' },
  to: { type: 'string' },
  'blob-store': { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

const run: Command = async (args) => {
  const { values } = parseCommandArgs(args, OPTIONS, { usage: HELP, warn: (m) => process.stderr.write(`appliance-forge migrate: warning: ${m}\n`) });
  const from = values.from;
  const to = values.to ?? (process.env.APPLIANCE_FORGE_DATABASE_URL || undefined);
  const blobStore = values['blob-store'] ?? (process.env.APPLIANCE_FORGE_BLOB_STORE || undefined);
  if (from === undefined) throw new UsageError('--from DATA_DIR is required');
  if (to === undefined || !/^postgres(ql)?:\/\//.test(to)) throw new UsageError('--to must be a postgres:// URL (or APPLIANCE_FORGE_DATABASE_URL)');
  if (blobStore !== undefined && !blobStore.startsWith('s3://')) throw new UsageError('--blob-store must be an s3:// URL (APPLIANCE_FORGE_BLOB_STORE too)');
  const r = await migrateDataFolder({
    from,
    to,
    blobStore,
    onProgress: (line) => (values.quiet ? undefined : process.stderr.write(`appliance-forge migrate: ${line}\n`)),
  }).catch((e: unknown) => {
    if (e instanceof ServerConfigError) throw new UsageError(e.message);
    throw e;
  });
  if (values.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    process.stdout.write(`migrated ${r.users} users, ${r.records} records and ${r.blobs} files (${r.bytes} bytes)\n`);
    process.stdout.write(`every node of the farm needs the same secret key: --secret-key-file ${r.secretKeyFile} (copied to each node, mode 0600)\n`);
  }
  return 0;
};

export const migrate: CommandModule = { run, help: HELP, options: OPTIONS };
