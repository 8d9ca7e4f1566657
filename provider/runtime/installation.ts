// The values of an Appliance's `installation`, checked by the model's checker of the install profile (the
// server's own rules), so that what the service would refuse fails `check` naming its property.
import { installationProblems } from '../../src/engine/installation';
import type { CheckFailure } from './inputs';
import { containsUnknown } from './plain';

/** The broken rules of an `installation` whose keys were read; none while a value is unknown (preview). */
export function installationFailures(raw: Record<string, unknown>): CheckFailure[] {
  if (containsUnknown(raw)) return [];
  let problems: ReturnType<typeof installationProblems>;
  try {
    problems = installationProblems(raw);
  } catch {
    // A value of the wrong type (a list where text goes): the service's 400 names it.
    return [];
  }
  return problems.map((p) => ({ property: `installation.${p.path}`, reason: `installation.${p.path} ${p.why}` }));
}
