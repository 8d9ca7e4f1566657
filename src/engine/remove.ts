// Removing what the engine made, one object at a time: the steps of `destroy`, of `apply --prune` and
// of the Pulumi provider's delete handlers, so that a removal means the same thing everywhere. The
// service does the cascade (an image takes its publications and their Glance copies with it, an
// appliance its images; a running job is cancelled first); a step that finds its object gone (404)
// counts it as gone, not as a failure.
import type { Client } from '../client';
import { ApiError } from '../client/errors';
import { isForgeError } from '../errors';
import { uriParams } from '../model/uris';
import type { EventSink } from './events';

/** The kinds a declaration makes on the service and that can be removed. */
export type RemovableKind = 'publication' | 'image' | 'appliance' | 'software';

/** One object to remove, as a plan shows it. */
export interface Removal {
  readonly kind: RemovableKind;
  readonly uri: string;
  /** What a person recognizes it by (`web 1.0`, `QCOW2`, a display name). */
  readonly name: string;
  /** Why it goes, in words. */
  readonly reason: string;
  /** What the service holds now, for `before` in the changes (no secret). */
  readonly before: Readonly<Record<string, unknown>>;
}

export interface Removed {
  readonly kind: RemovableKind;
  readonly uri: string;
  readonly name: string;
  /** `gone`: someone removed it first. */
  readonly outcome: 'removed' | 'gone';
}

/** The service answered 404: the object is gone. */
export const isNotFound = (e: unknown): boolean => isForgeError(e, ApiError) && e.status === 404;

type Step = (client: Client, uri: string, signal?: AbortSignal) => Promise<unknown>;

/** How each kind is removed, by its URI (its `uid` is the URI's, so another user's URI stays theirs). */
const STEPS: { readonly [K in RemovableKind]: Step } = {
  publication: (c, uri, signal) => c.machineImagePublished_delete({ ...uriParams('machineImagePublished_get', uri), signal }),
  image: (c, uri, signal) => c.machineImage_delete({ ...uriParams('machineImage_get', uri), signal }),
  appliance: (c, uri, signal) => c.appliance_delete({ ...uriParams('appliance_get', uri), signal }),
  software: (c, uri, signal) => c.mySoftware_delete({ ...uriParams('mySoftware_get', uri), signal }),
};

/** The order removals run in: what depends on an object goes before it (a component in use cannot go). */
export const REMOVAL_ORDER: readonly RemovableKind[] = ['publication', 'image', 'appliance', 'software'];

/** Removes one object; an object already gone is `gone`, any other refusal throws. */
export async function removeObject(client: Client, kind: RemovableKind, uri: string, signal?: AbortSignal): Promise<Removed['outcome']> {
  try {
    await STEPS[kind](client, uri, signal);
    return 'removed';
  } catch (e) {
    if (isNotFound(e)) return 'gone';
    throw e;
  }
}

/** Removes every object in REMOVAL_ORDER, one after the other, telling each as a step. */
export async function removeAll(
  client: Client, removals: readonly Removal[], o: { signal?: AbortSignal | undefined; emit?: EventSink | undefined } = {},
): Promise<Removed[]> {
  const out: Removed[] = [];
  const ordered = [...removals].sort((a, b) => REMOVAL_ORDER.indexOf(a.kind) - REMOVAL_ORDER.indexOf(b.kind));
  for (const r of ordered) {
    const outcome = await removeObject(client, r.kind, r.uri, o.signal);
    o.emit?.({ type: 'step', message: `${outcome === 'removed' ? 'removed' : 'already gone:'} ${r.kind} ${r.name} (${r.uri})` });
    out.push({ kind: r.kind, uri: r.uri, name: r.name, outcome });
  }
  return out;
}
