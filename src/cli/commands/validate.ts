// `appliance-forge validate FILE [--strict] [--json]`: checks a declaration offline, with no service
// and no secrets (a pull request from a fork has none): the schema, the bundle files, the `${env:NAME}`
// and `${var:NAME}` names (unset ones are reported, not fatal), unknown fields (errors with --strict, with the key a typo
// most likely meant), and the platform tool's keys this project does not support.
import { formatProblems, validateDeclarationFile } from '../../engine';
import { UsageError, type Command, type CommandModule } from '../command';
import { HELP_OPTION, parseCommandArgs, QUIET_OPTION, SOURCES_OPTION, VARS_HELP, VARS_OPTIONS, varsOf } from '../options';

const HELP = `usage: appliance-forge validate FILE [options]

Checks a declaration offline: the schema, that bundle files exist, the \${env:NAME} and \${var:NAME} variables it
reads (an unset one is reported, since plan and apply will need it), unknown fields and the platform tool's keys this project does not
support. Needs no service and no credentials.

options:
      --strict    unknown fields are errors (with a "did you mean" for near misses), not warnings
      --allow-outside-sources
                  accept bundle sources outside the declaration's folder (absolute, ../, or a link pointing out)
      --json      one JSON document: {ok, target (null: offline), file, errors, warnings, problems, more?, env, vars}
  -q, --quiet     no summary line; problems only
  -h, --help

${VARS_HELP}

exit status: 0 valid (warnings allowed), 2 invalid file or usage (as plan and apply)
`;

const OPTIONS = { ...HELP_OPTION, ...QUIET_OPTION, ...SOURCES_OPTION, ...VARS_OPTIONS, strict: { type: 'boolean' }, json: { type: 'boolean' } } as const;

const run: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, { usage: HELP, positionals: true, warn: (m) => process.stderr.write(`appliance-forge validate: warning: ${m}\n`) });
  if (positionals.length !== 1) throw new UsageError(`validate takes one declaration file\n${HELP.split('\n')[0]}`);
  const file = positionals[0]!;
  const vars = varsOf(values);
  const report = validateDeclarationFile(file, { strict: values.strict === true, allowOutsideSources: values['allow-outside-sources'] === true, vars });
  const { errors, warnings, problems, more, env } = report;
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    for (const l of formatProblems(problems, more)) process.stderr.write(`${l}\n`);
    if (!values.quiet) {
      const counts = `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
      const refs = [...env.map((n) => `\${env:${n}}`), ...report.vars.map((n) => `\${var:${n}}`)];
      const reads = refs.length ? `; reads ${refs.join(', ')}` : '';
      process.stdout.write(`${file}: ${errors ? 'invalid' : 'valid'} (${counts})${reads}\n`);
    }
  }
  // An invalid declaration is exit 2 in every command that reads one (plan and apply too: failure.ts).
  return errors ? 2 : 0;
};

export const validate: CommandModule = { run, help: HELP, options: OPTIONS };
