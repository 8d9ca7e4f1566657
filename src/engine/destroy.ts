// `destroy`: what a declaration made on the service, found the way apply finds it (the appliance by
// name and version, each bundle's component by name and version), and the plan of removing it. An
// appliance goes only when an apply wrote it (its tag carries the engine's mark): a template of the
// same name made by hand or by another tool is left alone. A component still used by an appliance
// that stays is left too. Planning reads only; the removal steps are remove.ts's.
import type { Client } from '../client';
import { jobState } from '../model/job-state';
import type { Appliance } from '../model/resources';
import type { Declaration } from './declaration';
import { observe } from './observe';
import { madeByForge, recordUri, sameUri } from './plan';
import type { Removal } from './remove';
import type { Observed } from './state';

export interface DestroyPlan {
  /** What goes, in the order it is removed (publications, images, the appliance, its components). */
  readonly removals: readonly Removal[];
  /** Objects of the declaration that stay, with why. */
  readonly kept: readonly Removal[];
  readonly hasChanges: boolean;
}

/** A pure function of what the service holds: `others` are every appliance of the user. */
export function computeDestroy(decl: Declaration, observed: Observed, others: readonly Appliance[]): DestroyPlan {
  const removals: Removal[] = [];
  const kept: Removal[] = [];
  const app = observed.appliance;
  const { name, version } = decl.stack;
  let removedApp: string | undefined;
  if (app) {
    const uri = recordUri(app, 'appliance');
    const item = { kind: 'appliance', uri, name: `${name} ${version}`, before: { uri, name, version, revision: app.revision ?? 0 } } as const;
    if (madeByForge(app)) {
      removedApp = uri;
      for (const p of observed.publications) {
        const puri = recordUri(p, 'publishImage');
        removals.push({
          kind: 'publication', uri: puri, name: p.displayName ?? '?', reason: `published from ${name} ${version}`,
          before: { uri: puri, imageUri: p.imageUri, cloudId: p.cloudId || undefined },
        });
      }
      for (const i of observed.images) {
        const iuri = recordUri(i, 'image');
        removals.push({
          kind: 'image', uri: iuri, name: i.targetFormat?.name ?? '?', reason: `image of ${name} ${version}`,
          before: { uri: iuri, format: i.targetFormat?.name, revision: i.revision ?? 0, state: jobState(i.status ?? {}), sha256: i.sha256sum || undefined },
        });
      }
      removals.push({ ...item, reason: 'the declared appliance' });
    } else {
      kept.push({ ...item, reason: 'not made by appliance-forge (its tag has no forge-software: mark): left alone' });
    }
  }
  for (const b of decl.stack.bundles) {
    const found = observed.software.get(b.name);
    if (!found) continue;
    const uri = recordUri(found.record, 'mySoftware');
    const item = { kind: 'software', uri, name: `${b.name} ${b.version}`, before: { uri, name: b.name, version: b.version } } as const;
    const users = others.filter((a) => a.uri && !sameUri(a.uri, removedApp) && (a.mySoftwareList ?? []).some((s) => sameUri(s.uri, uri)));
    if (users.length) kept.push({ ...item, reason: `used by ${users.map((a) => `${a.name ?? '?'} ${a.version ?? '?'} (${a.uri ?? '?'})`).join(', ')}` });
    else removals.push({ ...item, reason: 'a declared software bundle' });
  }
  return { removals, kept, hasChanges: removals.length > 0 };
}

/** Reads what the declaration holds on the service (GETs only) and plans its removal. */
export async function observeDestroy(client: Client, decl: Declaration, signal?: AbortSignal): Promise<DestroyPlan> {
  const [observed, all] = await Promise.all([observe(client, decl, signal), client.appliance_getAll({ signal })]);
  return computeDestroy(decl, observed, all.appliances ?? []);
}
