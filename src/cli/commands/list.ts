// `appliance-forge list [KIND…]`: the appliances (the platform's templates), software components, images
// and publications of the user, as a table or one JSON document.
import { INVENTORY_KINDS, type InventoryItem, listInventory, type RemovableKind } from '../../engine';
import { UsageError, type CommandModule } from '../command';
import { CONNECTION_HELP } from '../options';
import { runServiceCommand, SERVICE_OPTIONS } from '../service-command';

const HELP = `usage: appliance-forge list [KIND…] [options]

Lists what the user holds on the service: appliances (templates), software, images and publications, or only the
KINDs given (${INVENTORY_KINDS.join(', ')}; plurals too). Each row's URI is what \`show\` takes.

${CONNECTION_HELP}
      --data-dir DIR     data of the embedded server (default ./.appliance-forge)

output:
      --json             one JSON document on stdout: {ok, target, items: [{kind, uri, name, state, detail, fields}]}
  -q, --quiet            no notes on stderr

exit status: 0 ok, 2 usage, 1 any other failure
`;

/** `images` → `image`; undefined for a word that names no kind. */
export function kindOf(word: string): RemovableKind | undefined {
  const k = word.toLowerCase();
  return INVENTORY_KINDS.find((x) => x === k || `${x}s` === k);
}

function table(items: readonly InventoryItem[]): string[] {
  const rows = [['KIND', 'URI', 'NAME', 'STATE', 'DETAIL'], ...items.map((i) => [i.kind, i.uri, i.name, i.state, i.detail])];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((v, c) => (c === r.length - 1 ? v : v.padEnd(widths[c]!))).join('  ').trimEnd());
}

export const list: CommandModule = {
  help: HELP,
  options: SERVICE_OPTIONS,
  words: INVENTORY_KINDS,
  run: (args) => {
    let kinds: RemovableKind[] = [];
    return runServiceCommand('list', args, HELP, (positionals) => {
      kinds = positionals.map((w) => kindOf(w) ?? (() => {
        throw new UsageError(`unknown kind ${JSON.stringify(w)}: one of ${INVENTORY_KINDS.join(', ')}`);
      })());
    }, async ({ conn, target, json, out, signal }) => {
      const items = await listInventory(conn.client, kinds.length ? kinds : INVENTORY_KINDS, signal);
      if (json) out(JSON.stringify({ ok: true, target, items }));
      else if (!items.length) out(`nothing on the service for ${conn.client.login}`);
      else for (const l of table(items)) out(l);
      return 0;
    });
  },
};
