// The appliance's OS profile (spec rule 2) and the packages added to it (rule 3): the steps the engine's
// apply and the Pulumi provider both take, after `planOsProfile` (plan.ts) decided what to do.
import type { Client } from '../client';
import { idOf, type OsProfilePlan, recordUri, urisOf } from './plan';

/** The appliance the profile belongs to: `uid` left out is the client's login. */
export interface ApplianceRef {
  readonly uid?: string;
  readonly aid: string;
}

export interface SettledProfile {
  readonly uri: string;
  /** For a profile made now (created or replaced): the packages its base gave it, to plan the packages against. */
  readonly packageUris?: readonly string[] | undefined;
}

/** Creates, replaces (delete, then create) or keeps the profile, as planned. */
export async function settleOsProfile(client: Client, app: ApplianceRef, plan: OsProfilePlan, signal?: AbortSignal): Promise<SettledProfile> {
  if (plan.action === 'unchanged') return { uri: plan.uri };
  if (plan.action === 'update') await client.applianceOSProfile_delete({ ...app, osid: idOf(plan.uri), signal });
  const made = await client.applianceOSProfile_create({
    ...app, body: { kind: 'LinuxProfile', name: plan.name, standardProfileUri: plan.standardProfileUri }, signal,
  });
  const uri = recordUri(made, 'distribProfile');
  const now = await client.applianceOSProfilePkg_getAll({ ...app, osid: idOf(uri), signal });
  return { uri, packageUris: urisOf(now.pkgs) };
}

/** Adds and removes packages of the profile in one request; nothing to change sends none. */
export async function changeProfilePackages(
  client: Client, app: ApplianceRef, profileUri: string, change: { readonly add: readonly string[]; readonly remove: readonly string[] }, signal?: AbortSignal,
): Promise<boolean> {
  if (!change.add.length && !change.remove.length) return false;
  await client.applianceOSProfilePkg_updateAll({
    ...app, osid: idOf(profileUri), body: { addedPkgUris: [...change.add], deletedPkgUris: [...change.remove] }, signal,
  });
  return true;
}
