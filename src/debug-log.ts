// The one switch of the diagnostics (docs/cli-guide.md, and docs/images.md "Real images"): APPLIANCE_FORGE_LOG=debug
// turns on the commands' request trace and the build's stage notes.

/** The environment variable, and its one value that turns the diagnostics on. */
export const DEBUG_LOG_VARIABLE = 'APPLIANCE_FORGE_LOG';

/** Whether `env` asks for the debug diagnostics. */
export function debugLogOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[DEBUG_LOG_VARIABLE] === 'debug';
}
