// `appliance-forge apply FILE`: brings the service to the declaration (converges: a second run of
// an unchanged file changes nothing).
import type { Command } from '../command';
import { runDeclarationCommand } from '../declaration-command';

export const apply: Command = (args) => runDeclarationCommand('apply', args);
