// `appliance-forge plan FILE`: what an apply would create, change, regenerate or publish; changes nothing.
import type { Command } from '../command';
import { runDeclarationCommand } from '../declaration-command';

export const plan: Command = (args) => runDeclarationCommand('plan', args);
