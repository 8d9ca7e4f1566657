#!/usr/bin/env node
// `appliance-forge <command> …`: a small table of commands, each in src/cli/commands/<name>.ts and
// loaded only when called.
import { UsageError, type Command } from './command';
import { messageOf } from '../errors';

const COMMANDS: Readonly<Record<string, { summary: string; load: () => Promise<Command> }>> = {
  serve: { summary: 'run the reference server', load: async () => (await import('./commands/serve.js')).serve },
  users: { summary: 'manage users of a server data dir (users add <login>)', load: async () => (await import('./commands/users.js')).users },
  plan: { summary: 'say what apply would change for a declaration FILE (changes nothing)', load: async () => (await import('./commands/plan.js')).plan },
  apply: { summary: 'build and publish the images a declaration FILE describes', load: async () => (await import('./commands/apply.js')).apply },
  boot: { summary: 'boot an IMAGE under QEMU: did it reach login? (--login, --run CMD)', load: async () => (await import('./commands/boot.js')).boot },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return `usage: appliance-forge <command> [options]\n\ncommands:\n${lines.join('\n')}\n`;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const entry = Object.prototype.hasOwnProperty.call(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    process.stderr.write(`appliance-forge: unknown command ${JSON.stringify(name)}\n${usage()}`);
    return 2;
  }
  try {
    return await (await entry.load())(rest);
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`appliance-forge ${name}: ${messageOf(e)}\n`);
      return 2;
    }
    process.stderr.write(`appliance-forge ${name}: ${messageOf(e)}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`${messageOf(e)}\n`);
      process.exitCode = 1;
    },
  );
}
