// `appliance-forge <command> …`: a small table of commands, each in src/cli/commands/<name>.ts and
// loaded only when called. `--help` on any command prints its help and exits 0; `--version` prints the
// package's version. main.ts is the entry; the one-file build (scripts/build-cli.mjs) starts here.
import type { CommandTable } from './command';
import { messageOf } from '../errors';
import { echo } from '../error-text';
import { describeFailure } from '../engine/failure';
import { asksForHelp } from './options';
import { packageVersion } from './version';
import { peerHint } from '../engine/peer-packages';
import { nearMiss } from '../engine/platform-keys';

/** The commands, their one-line summaries and their modules: `--help`, the completion scripts and docs/cli.md (scripts/gen-docs.mjs) come from here. */
export const COMMANDS: CommandTable = {
  serve: { summary: 'run the reference server', load: async () => (await import('./commands/serve.js')).serve },
  users: { summary: 'manage users of a server data dir (users add <login>)', load: async () => (await import('./commands/users.js')).users },
  migrate: { summary: "copy a server's data folder into a build farm's PostgreSQL and S3", load: async () => (await import('./commands/migrate.js')).migrate },
  validate: { summary: 'check a declaration FILE offline: no service, no credentials', load: async () => (await import('./commands/validate.js')).validate },
  plan: { summary: 'say what apply would change for a declaration FILE (changes nothing)', load: async () => (await import('./commands/plan.js')).plan },
  apply: { summary: 'build and publish the images a declaration FILE describes', load: async () => (await import('./commands/apply.js')).apply },
  destroy: { summary: 'remove what a declaration FILE made (asks first; --auto-approve)', load: async () => (await import('./commands/destroy.js')).destroy },
  list: { summary: 'list the appliances, software, images and publications of the user', load: async () => (await import('./commands/list.js')).list },
  show: { summary: 'print one of them: show KIND URI', load: async () => (await import('./commands/show.js')).show },
  boot: { summary: 'boot an IMAGE under QEMU: did it reach login? (--login, --run CMD)', load: async () => (await import('./commands/boot.js')).boot },
  diff: { summary: 'name the first differences of two disk images (files, then table and superblock)', load: async () => (await import('./commands/diff.js')).diff },
  // Generated from this table: a command added above completes without a change there.
  completion: { summary: 'print a bash or zsh completion script', load: async () => (await import('./commands/completion.js')).completionCommand(COMMANDS) },
};

/** The top-level usage text (`appliance-forge --help`). */
export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)} ${c.summary}`);
  return `usage: appliance-forge <command> [options]
       appliance-forge <command> --help     the command's options
       appliance-forge --version

commands:
${lines.join('\n')}

environment: APPLIANCE_FORGE_URL, _USER, _API_KEY, _SECRET_KEY, _PASSWORD (connection); NO_COLOR, TERM=dumb (no colours, no redrawn bars)
`;
}

export async function main(argv: readonly string[]): Promise<number> {
  let [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`appliance-forge ${packageVersion()}\n`);
    return 0;
  }
  if (name === 'help' && rest[0] !== undefined) [name, rest] = [rest[0], ['--help']];
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    (name ? process.stdout : process.stderr).write(usage());
    return name ? 0 : 2;
  }
  const entry = Object.prototype.hasOwnProperty.call(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    // `aply` → apply; `--versoin` is an option, not a command: --version.
    const option = name.startsWith('-');
    const near = nearMiss(name.replace(/^-+/, ''), option ? ['version', 'help'] : Object.keys(COMMANDS));
    const meant = near ? `; did you mean ${option ? `--${near}` : near}?` : '';
    process.stderr.write(`appliance-forge: unknown ${option ? 'option' : 'command'} ${echo(name)}${meant}\n${usage()}`);
    return 2;
  }
  // With --detailed-exitcode, 2 means "changes present": a usage error is then 1, as terraform does.
  const usageCode = rest.some((a) => a === '--detailed-exitcode' || a === '-detailed-exitcode') ? 1 : 2;
  try {
    const command = await entry.load();
    if (asksForHelp(rest)) {
      process.stdout.write(command.help.endsWith('\n') ? command.help : `${command.help}\n`);
      return 0;
    }
    return await command.run(rest);
  } catch (e) {
    // Secrets of plan and apply are masked where they are known (declaration-command.ts); serve, users and boot print none.
    const f = describeFailure(e, { mask: (text) => text });
    process.stderr.write(`appliance-forge ${name}: ${peerHint(e, `appliance-forge ${name}`) ?? f.message}\n`);
    return f.exitCode === 2 ? usageCode : 1;
  }
}

/**
 * Exits once stdout and stderr have taken what was written. The command has closed what it opened by
 * now; waiting for the event loop to drain would also wait for V8's background work (a garbage
 * collection's concurrent marking started near the end: 20–200 ms, none of it the command's).
 */
function exitWhenFlushed(code: number): void {
  process.exitCode = code;
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

/** Runs the command line with these arguments; the process exits with the command's code when it ends. */
export function run(argv: readonly string[]): void {
  main(argv).then(
    (code) => exitWhenFlushed(code),
    (e: unknown) => {
      process.stderr.write(`${messageOf(e)}\n`);
      process.exitCode = 1;
    },
  );
}

// The one-file build run directly (`node dist/cli/appliance-forge.js`), as the tests' bundle of this file is.
if (require.main === module) run(process.argv.slice(2));
