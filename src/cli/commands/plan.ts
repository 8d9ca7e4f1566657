// `appliance-forge plan FILE`: what an apply would create, change, regenerate or publish; changes nothing.
import type { CommandModule } from '../command';
import { DECLARATION_OPTIONS, declarationHelp, runDeclarationCommand } from '../declaration-command';

export const plan: CommandModule = { run: (args) => runDeclarationCommand('plan', args), help: declarationHelp('plan'), options: DECLARATION_OPTIONS };
