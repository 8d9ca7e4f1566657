// `appliance-forge validate FILE [--strict] [--json]`: checks a declaration offline, with no service
// and no secrets (a pull request from a fork has none): the schema, the bundle files, the `${env:NAME}`
// names (unset ones are reported, not fatal), unknown fields (errors with --strict, with the key a typo
// most likely meant), and the platform tool's keys this project does not support.
import { formatProblems, validateDeclarationFile } from '../../engine';
import { UsageError, type Command, type CommandModule } from '../command';
import { HELP_OPTION, parseCommandArgs, QUIET_OPTION, SOURCES_OPTION } from '../options';

const HELP = `usage: appliance-forge validate FILE [options]

Checks a declaration offline: the schema, that bundle files exist, the \${env:NAME} variables it reads (an unset one
is reported, since plan and apply will need it), unknown fields and the platform tool's keys this project does not
support. Needs no service and no credentials.

options:
      --strict    unknown fields are errors (with a "did you mean" for near misses), not warnings
      --allow-outside-sources
                  accept bundle sources outside the declaration's folder (absolute, ../, or a link pointing out)
      --json      one JSON document: {ok, file, errors, warnings, problems, more?, env}
  -q, --quiet     no summary line; problems only
  -h, --help

exit status: 0 valid (warnings allowed), 1 invalid, 2 usage
`;

const run: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, {
    ...HELP_OPTION, ...QUIET_OPTION, ...SOURCES_OPTION, strict: { type: 'boolean' }, json: { type: 'boolean' },
  }, { usage: HELP, positionals: true, warn: (m) => process.stderr.write(`appliance-forge validate: warning: ${m}\n`) });
  if (positionals.length !== 1) throw new UsageError(`validate takes one declaration file\n${HELP.split('\n')[0]}`);
  const file = positionals[0]!;
  const report = validateDeclarationFile(file, { strict: values.strict === true, allowOutsideSources: values['allow-outside-sources'] === true });
  const { errors, warnings, problems, more, env } = report;
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    for (const l of formatProblems(problems, more)) process.stderr.write(`${l}\n`);
    if (!values.quiet) {
      const counts = `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
      const reads = env.length ? `; reads ${env.map((n) => `\${env:${n}}`).join(', ')}` : '';
      process.stdout.write(`${file}: ${errors ? 'invalid' : 'valid'} (${counts})${reads}\n`);
    }
  }
  return errors ? 1 : 0;
};

export const validate: CommandModule = { run, help: HELP };
