// `appliance-forge show KIND ID`: one appliance, software component, image or publication, by the URI
// `list` prints (or, for an appliance or a component, its number), without its secret fields.
import { stringify } from 'yaml';
import { INVENTORY_KINDS, inventoryUri, inventoryUriText, showRecord } from '../../engine';
import { UsageError, type CommandModule } from '../command';
import { CONNECTION_HELP } from '../options';
import { runServiceCommand, SERVICE_OPTIONS } from '../service-command';
import { kindOf } from './list';

const HELP = `usage: appliance-forge show KIND ID [options]

Prints one record of the service: KIND is ${INVENTORY_KINDS.join(', ')}; ID its URI as \`list\`, \`plan --json\` and
\`apply\` print it (users/alice/appliances/3/images/7), or the number of an appliance or a software component.

${CONNECTION_HELP}
      --data-dir DIR     data of the embedded server (default ./.appliance-forge)

output:
      --json             one JSON document on stdout: {ok, target, kind, uri, record}
  -q, --quiet            no notes on stderr

exit status: 0 ok, 2 usage, 1 any other failure (a record that does not exist: the service's 404)
`;

export const show: CommandModule = {
  help: HELP,
  options: SERVICE_OPTIONS,
  words: INVENTORY_KINDS,
  run: (args) => runServiceCommand('show', args, HELP, (positionals) => {
    if (positionals.length !== 2) throw new UsageError(`show takes a KIND and an ID\n${HELP.split('\n')[0]}`);
    const kind = kindOf(positionals[0]!);
    if (!kind) throw new UsageError(`unknown kind ${JSON.stringify(positionals[0])}: one of ${INVENTORY_KINDS.join(', ')}`);
    try {
      inventoryUri(kind, positionals[1]!, 'check');
    } catch {
      const numbered = kind === 'appliance' || kind === 'software' ? ' or its number' : '';
      throw new UsageError(`${kind} ${JSON.stringify(positionals[1])}: give its URI (${inventoryUriText(kind)}, as list prints it)${numbered}`);
    }
  }, async ({ conn, target, positionals, json, out, signal }) => {
    const kind = kindOf(positionals[0]!)!;
    const uri = inventoryUri(kind, positionals[1]!, conn.client.login);
    const record = await showRecord(conn.client, kind, uri, signal);
    if (json) out(JSON.stringify({ ok: true, target, kind, uri, record }));
    else out(stringify(record).trimEnd());
    return 0;
  }),
};
