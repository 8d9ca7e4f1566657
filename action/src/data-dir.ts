// The embedded server's data folder of a step: under RUNNER_TEMP (the runner's temporary folder for
// the job, emptied by the runner between jobs), never in the workspace, so a checkout (a fork's pull
// request too) cannot place a link, a database or a key file where the step, often as root, opens it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const FOLDER = 'appliance-forge';

/**
 * `$RUNNER_TEMP/appliance-forge`, shared by the job's steps. Outside a runner (no RUNNER_TEMP): a new
 * private folder in the OS temp folder (mkdtemp, 0700), never a fixed name another user could take first.
 */
export function embeddedDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RUNNER_TEMP) return path.join(env.RUNNER_TEMP, FOLDER);
  return mkdtempSync(path.join(tmpdir(), `${FOLDER}-`));
}
