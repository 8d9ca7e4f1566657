// `appliance-forge destroy FILE`: removes what the declaration made on the service, after showing it
// and a yes on the terminal (or --auto-approve).
import type { CommandModule } from '../command';
import { declarationHelp, declarationOptions, runDeclarationCommand } from '../declaration-command';

export const destroy: CommandModule = {
  run: (args) => runDeclarationCommand('destroy', args), help: declarationHelp('destroy'), options: declarationOptions('destroy'),
};
