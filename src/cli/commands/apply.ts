// `appliance-forge apply FILE`: brings the service to the declaration (converges: a second run of
// an unchanged file changes nothing).
import type { CommandModule } from '../command';
import { declarationHelp, declarationOptions, runDeclarationCommand } from '../declaration-command';

export const apply: CommandModule = { run: (args) => runDeclarationCommand('apply', args), help: declarationHelp('apply'), options: declarationOptions('apply') };
