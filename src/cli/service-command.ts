// Commands that read the service without a declaration (`list`, `show`): the connection options and
// settings of plan and apply (service-settings.ts), one failure path, `--json` for one document.
import { describeFailure } from '../engine/failure';
import { debugLogOn } from '../debug-log';
import type { Connection } from '../engine/connect';
import { SecretSet } from '../engine/secrets';
import { openConnection, serviceSettings } from './service-settings';
import { CONNECTION_OPTIONS, DATA_DIR_OPTION, HELP_OPTION, parseCommandArgs, QUIET_OPTION } from './options';

/** The options of these commands: the connection, the data dir, --json, --quiet. */
export const SERVICE_OPTIONS = {
  ...CONNECTION_OPTIONS, ...DATA_DIR_OPTION, ...HELP_OPTION, ...QUIET_OPTION, json: { type: 'boolean' },
} as const;

export interface ServiceRun {
  readonly conn: Connection;
  /** The service's URL without credentials, or `embedded`: the documents name it. */
  readonly target: string;
  readonly positionals: readonly string[];
  readonly json: boolean;
  /** One line on stdout, masked. */
  readonly out: (s: string) => void;
  readonly signal: AbortSignal;
}

/** Parses, connects, runs `body` and closes; a failure is one masked line (or `{ok: false, error}` with --json), exit 1. */
export async function runServiceCommand(
  name: string, args: readonly string[], usage: string,
  /** Throws a UsageError for wrong arguments, before anything connects. */
  check: (positionals: readonly string[]) => void,
  body: (r: ServiceRun) => Promise<number>,
): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, SERVICE_OPTIONS, { usage, positionals: true, warn: (m) => process.stderr.write(`appliance-forge ${name}: warning: ${m}\n`) });
  check(positionals);
  const json = values.json === true;
  const secrets = new SecretSet();
  const err = (s: string) => process.stderr.write(`${secrets.mask(s)}\n`);
  const out = (s: string) => process.stdout.write(`${secrets.mask(s)}\n`);
  const debug = (s: string) => err(`debug: ${s}`);
  const { settings, target, urlGiven } = serviceSettings(values, process.env, secrets, {
    warn: (m) => err(`appliance-forge ${name}: warning: ${m}`), trace: debugLogOn() ? debug : undefined,
  });
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.on('SIGINT', stop); // until the end (see interruptible.ts): a last listener's re-raise would kill the process
  let conn: Connection | undefined;
  try {
    const opened = await openConnection(settings, process.env, secrets, { debug, urlGiven, target });
    conn = opened.conn;
    if (conn.target === 'embedded' && !json && values.quiet !== true) err(opened.using);
    return await body({ conn, target, positionals, json, out, signal: ac.signal });
  } catch (e) {
    const f = describeFailure(e, secrets, undefined, settings);
    if (json) out(JSON.stringify({ ok: false, target, error: { message: f.message } }));
    else err(`${name} failed: ${f.message}`);
    return f.interrupted ? 130 : 1;
  } finally {
    process.off('SIGINT', stop);
    await conn?.close();
  }
}
