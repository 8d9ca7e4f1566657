// `appliance-forge plan FILE`: what an apply would create, change, regenerate or publish; changes nothing.
import type { CommandModule } from '../command';
import { declarationHelp, declarationOptions, runDeclarationCommand } from '../declaration-command';

export const plan: CommandModule = { run: (args) => runDeclarationCommand('plan', args), help: declarationHelp('plan'), options: declarationOptions('plan') };
