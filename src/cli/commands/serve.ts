// `appliance-forge serve [options]` (HELP below): prints the base URL on one line, refreshes the
// package catalog from the mirror in the background (docs/server.md "Catalog refresh"), stops gracefully on
// SIGTERM/SIGINT (running jobs end as cancelled, the database is closed).
import { SERVER_ROLES, ServerConfigError, startServer, startWorker, topologyProblem, type ServerRole } from '../../server';
import { openLiveCatalog } from '../../server/catalog/live';
import { isPublicBaseUrl } from '../../server/http/errors';
import { currentBuildHost, defaultCacheDir, defaultMirror, validateMirror, type MirrorConfig } from '../../imaging';
import { ignoreInGit } from '../../engine/embedded';
import { DEFAULT_DATA_DIR, UsageError, type Command, type CommandModule } from '../command';
import { HELP_OPTION, parseCommandArgs, QUIET_OPTION } from '../options';
import { parseServeFlags, SERVE_FLAG_OPTIONS, serveFlagsHelp } from '../serve-flags';
import { messageOf } from '../../errors';

const HELP = `usage: appliance-forge serve [options]

Runs the reference server and prints its base URL on one line; stops cleanly on SIGTERM or SIGINT.

options:
      --role all|api|worker     all: the API and the builds (default); api: the API only; worker: the builds
                                only (no HTTP): a farm's nodes (docs/server.md "Running a build farm")
      --database-url URL        postgres://…: records and the job queue in PostgreSQL, shared by a farm's
                                nodes (or APPLIANCE_FORGE_DATABASE_URL)
      --blob-store URL          s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path-style=true]: blobs in a
                                bucket, credentials from the AWS SDK's chain (or APPLIANCE_FORGE_BLOB_STORE)
      --secret-key-file FILE    the key secrets are sealed with, the same file on every node of a farm
                                (default <data-dir>/secret.key)
      --host HOST               address to bind (default 127.0.0.1)
      --data-dir DIR            the server's data (default ${DEFAULT_DATA_DIR}; --data is a deprecated alias)
      --public-url URL          the base URL clients see (behind a proxy)
      --cloud-endpoint URL      an OpenStack endpoint publications may reach; repeatable
      --mirror URL              Debian archive for builds and the catalog (default: the Debian archive)
      --security-mirror URL|none
      --no-catalog-refresh      keep the shipped package catalog
      --no-console              no web console at /console (docs/server.md "Web console")
      --cache-dir DIR           cached OS layers
      --layers-per-owner        OS layers keyed by their owner too: a cache hit tells no one what others built
      --log                     request log on stdout (without it, failed jobs and server errors only, on stderr)
  -q, --quiet                   no catalog refresh notes on stderr
  -h, --help

limits (a flag or its environment variable; the flag wins, an empty variable is unset):
${serveFlagsHelp()}
`;

const OPTIONS = {
      ...HELP_OPTION, ...QUIET_OPTION, ...SERVE_FLAG_OPTIONS,
      role: { type: 'string', default: 'all' },
      'database-url': { type: 'string' },
      'blob-store': { type: 'string' },
      'secret-key-file': { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      'data-dir': { type: 'string', default: DEFAULT_DATA_DIR },
      'public-url': { type: 'string' },
      'cloud-endpoint': { type: 'string', multiple: true },
      log: { type: 'boolean', default: false },
      mirror: { type: 'string' },
      'security-mirror': { type: 'string' },
      'no-catalog-refresh': { type: 'boolean', default: false },
      'no-console': { type: 'boolean', default: false },
      'cache-dir': { type: 'string' },
      'layers-per-owner': { type: 'boolean', default: false },
} as const;

const run: Command = async (args) => {
  const { values } = parseCommandArgs(args, OPTIONS, { usage: HELP, warn: (m) => process.stderr.write(`appliance-forge serve: warning: ${m}\n`) });
  const dataDir = values['data-dir'];
  const numbers = parseServeFlags(values);
  const publicUrl = values['public-url'];
  if (publicUrl !== undefined && !isPublicBaseUrl(publicUrl)) throw new UsageError('--public-url must be an http(s) base URL, e.g. https://forge.example.org/api');
  const cloudEndpoints = values['cloud-endpoint'];
  for (const e of cloudEndpoints ?? []) if (!isPublicBaseUrl(e)) throw new UsageError(`--cloud-endpoint must be an http(s) URL, got ${e}`);
  const role = values.role as ServerRole;
  if (!SERVER_ROLES.includes(role)) throw new UsageError(`--role must be one of ${SERVER_ROLES.join(', ')}, got ${values.role}`);
  const databaseUrl = values['database-url'] ?? (process.env.APPLIANCE_FORGE_DATABASE_URL || undefined);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new UsageError('--database-url must be a postgres:// URL (APPLIANCE_FORGE_DATABASE_URL too)');
  const blobStore = values['blob-store'] ?? (process.env.APPLIANCE_FORGE_BLOB_STORE || undefined);
  if (blobStore !== undefined && !blobStore.startsWith('s3://')) throw new UsageError('--blob-store must be an s3:// URL (APPLIANCE_FORGE_BLOB_STORE too)');
  const problem = topologyProblem({ role, databaseUrl, blobStore });
  if (problem !== undefined) throw new UsageError(problem);
  const node = {
    dataDir,
    databaseUrl,
    blobStore,
    secretKeyFile: values['secret-key-file'],
  };
  // One mirror for the image builds and the catalog refresh: what users search is what gets installed.
  const mirror = mirrorOf(values.mirror, values['security-mirror']);
  const building = {
    mirror,
    maxBuilds: numbers.maxBuilds,
    cacheDir: values['cache-dir'],
    layersPerOwner: values['layers-per-owner'],
    maxCacheBytes: numbers.maxCacheBytes,
    limits: numbers.limits,
  };
  const say = (line: string): void => {
    if (!values.quiet) process.stderr.write(`appliance-forge serve: ${line}\n`);
  };
  // How builds run; a cache folder they cannot reach is said at start (even with -q), not by each failed build.
  const builds = (): void => {
    const host = currentBuildHost();
    const problem = host.unreachable(building.cacheDir ?? defaultCacheDir(), 'cache folder');
    if (problem === undefined) return say(host.reason);
    process.stderr.write(`appliance-forge serve: ${host.reason}; but ${problem}: every build fails until then\n`);
  };
  if (role === 'worker') {
    const worker = await startWorker({ ...node, ...building }).catch(configured);
    ignoreInGit(dataDir);
    process.stderr.write(`appliance-forge serve: ${worker.summary}\n`);
    builds();
    await untilSignal(() => worker.close());
    return 0;
  }
  const refresh = values['no-catalog-refresh'] ? false : { mirror: mirror.archive, securityMirror: mirror.security ?? (false as const) };
  const catalog = openLiveCatalog({ dataDir, refresh, log: (m) => (values.quiet ? undefined : process.stderr.write(`${m}\n`)) });
  const server = await startServer({
    ...node,
    ...building,
    role,
    host: values.host,
    port: numbers.port,
    // Without --log the operator still sees why a job failed (its whole error: paths, tool output).
    logger: values.log ? true : 'errors',
    catalog,
    publicUrl,
    cloudEndpoints,
    console: !values['no-console'],
  }).catch(async (e: unknown) => {
    await catalog.close();
    return configured(e);
  });
  ignoreInGit(dataDir);
  process.stdout.write(`${server.url}\n`);
  // One line on the node's role and backends (always: an operator reads it in the service's log), one on how builds run.
  process.stderr.write(`appliance-forge serve: ${server.summary}\n`);
  if (role === 'all') builds();
  await untilSignal(() => Promise.all([catalog.close(), server.close()]));
  return 0;
};

/** A server that cannot start as configured is the caller's to fix (exit 2), in its one line. */
function configured(e: unknown): never {
  if (e instanceof ServerConfigError) throw new UsageError(e.message);
  throw e;
}

/**
 * Resolves once SIGTERM or SIGINT came and `stop` ended (whether it failed or not). The handler stays
 * until then: a module that watches signals to clean up at exit (proper-lockfile's signal-exit) kills
 * the process again with the signal when it finds itself the signal's last listener.
 */
function untilSignal(stop: () => Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const done = (): void => {
      process.off('SIGTERM', once);
      process.off('SIGINT', once);
      resolve();
    };
    const once = (): void => {
      if (stopping) return;
      stopping = true;
      stop().then(done, done);
    };
    process.on('SIGTERM', once);
    process.on('SIGINT', once);
  });
}

export const serve: CommandModule = { run, help: HELP, options: OPTIONS };

/** `--mirror` replaces the archive; the security archive stays the default unless `--security-mirror` (or `none`). */
function mirrorOf(archive: string | undefined, security: string | undefined): MirrorConfig {
  const base = defaultMirror();
  const sec = security === undefined ? base.security : security === 'none' ? undefined : security;
  try {
    return validateMirror({ archive: archive ?? base.archive, ...(sec !== undefined ? { security: sec } : {}) });
  } catch (e) {
    throw new UsageError(`--mirror / --security-mirror: ${messageOf(e)}`);
  }
}
