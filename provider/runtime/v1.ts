// The stable entry the serialized provider requires (`appliance-forge/pulumi/runtime/v1`). Its exported
// functions and their arguments never change: state written by any release carries provider code that
// calls them. New behaviour goes behind them; state from older releases must keep working (the kinds and
// property names below are part of that promise).
// Its first statement checks the Node version (node-floor.ts): the host may load it without the package's index.
import { exitIfNodeTooOld } from '../../src/node-floor';

exitIfNodeTooOld();

import type { Client } from '../../src/client';
import { ApiError, TransportError } from '../../src/client/errors';
import { isForgeError } from '../../src/errors';
import type { ResourceKind } from '../shapes';
import {
  checkConnection, connect, credentialsFrom, readSettings, refusedCredentials, settingsFor, type ConfigReader, type CredentialsFrom, type Settings,
} from './connection';
import { ProviderError } from './errors';
import { diffProps, type Handler } from './handler';
import { handlers } from './kinds';
import { Inputs, type CheckFailure } from './inputs';
import { containsUnknown, isRecord, plain, type Props } from './plain';

export type { Settings, ConfigReader } from './connection';
export type { CheckFailure } from './inputs';
export { ProviderError, type ProviderErrorKind } from './errors';
export type { Props } from './plain';
export { UNKNOWN } from './plain';

/** The engine's property that holds the serialized provider; never ours to read or write. */
const PROVIDER_KEY = '__provider';

const isKind = (kind: string): kind is ResourceKind => Object.prototype.hasOwnProperty.call(handlers, kind);

/** The kind's calls; past this point the engine passes back what the kind's `check` returned. */
function handlerOf(kind: string): Handler {
  if (!isKind(kind)) throw new ProviderError('service', `appliance-forge: unknown resource kind "${kind}" (state written by a newer release?)`);
  return handlers[kind];
}

/** One client per call, closed afterwards: the host process lives on between calls. A 401 names the URL, the user and where the credentials came from. */
async function withClient<T>(holder: Holder, props: Props, fn: (c: Client) => Promise<T>): Promise<T> {
  const from: CredentialsFrom = isRecord(props.connection) ? 'connection' : (holder ? configured.get(holder)?.from : undefined) ?? 'env';
  const settings = settingsFor(settingsOf(holder), props);
  const client = connect(settings);
  try {
    return await fn(client);
  } catch (e) {
    throw isForgeError(e, ApiError) && e.status === 401 ? refusedCredentials(e, settings, from) : e;
  } finally {
    await client.close();
  }
}

function own(props: Props | undefined): Props {
  const { [PROVIDER_KEY]: _, ...rest } = props ?? {};
  return rest;
}

/**
 * Settings by provider: the key is an empty object the serialized provider captures. The values stay here,
 * so a provider object never holds a credential, even if it were serialized after `configure`.
 */
const configured = new WeakMap<object, { settings: Settings; from: 'config' | 'env' }>();

/** The holder a provider passes to every call; anything else (older or foreign code) means "not configured". */
export type Holder = object | undefined;

const settingsOf = (holder: Holder): Settings | undefined => (holder ? configured.get(holder)?.settings : undefined);

/** `configure`: reads the provider configuration once per provider, in the host process. */
export function configure(holder: object, config: ConfigReader | undefined): void {
  configured.set(holder, { settings: readSettings(config), from: credentialsFrom(config) });
}

/**
 * `check`, in the preview as in `up`: the offline checks, then (`holder`: a provider of this release, configured)
 * what only the service knows, read before anything is created, so that a preview fails where `up` would.
 */
export async function check(kind: string, _olds: Props, news: Props, holder?: Holder): Promise<{ inputs: Props; failures: CheckFailure[] }> {
  const r = new Inputs(own(news));
  const h = handlerOf(kind);
  const inputs = h.check(r);
  const connection = checkConnection(r);
  if (connection !== undefined) inputs.connection = connection;
  const adopt = r.boolean('adopt', false);
  if (adopt !== false) inputs.adopt = adopt;
  const failures = [...r.failures];
  if (h.preflight && holder !== undefined) failures.push(...(await preflight(h, holder, plain(inputs), failures)));
  return { inputs: plain(inputs), failures };
}

/** The handler's questions to the service; none when it cannot be reached or is not configured yet (the create then says why). */
async function preflight(h: Handler, holder: Holder, inputs: Props, failures: readonly CheckFailure[]): Promise<CheckFailure[]> {
  const ask = h.preflight;
  if (!ask || containsUnknown(inputs.connection)) return [];
  const s = settingsFor(settingsOf(holder), inputs);
  if (!s.url || !s.user || !(s.password || (s.apiKey && s.secretKey))) return [];
  const skip = (p: string) => failures.some((f) => f.property === p || f.property.startsWith(`${p}.`) || f.property.startsWith(`${p}[`));
  try {
    return await withClient(holder, inputs, (c) => ask(c, inputs, skip));
  } catch (e) {
    if (isForgeError(e, TransportError)) return [];
    throw e;
  }
}

export async function diff(kind: string, _id: string, olds: Props, news: Props): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
  return diffProps(handlerOf(kind), own(olds), own(news));
}

export async function create(kind: string, holder: Holder, inputs: Props): Promise<{ id: string; outs: Props }> {
  const props = own(inputs);
  const h = handlerOf(kind);
  const r = await withClient(holder, props, (c) => h.create(c, props));
  return { id: r.id, outs: plain(r.outs) };
}

/** `read`: the object as it is now; an empty id tells the engine it is gone. */
export async function read(kind: string, holder: Holder, id: string, props: Props): Promise<{ id: string; props: Props }> {
  const own_ = own(props);
  const h = handlerOf(kind);
  const now = await withClient(holder, own_, (c) => h.read(c, id, own_));
  return now ? { id, props: plain(now) } : { id: '', props: {} };
}

export async function update(kind: string, holder: Holder, id: string, olds: Props, news: Props): Promise<{ outs: Props }> {
  const n = own(news);
  const h = handlerOf(kind);
  const outs = await withClient(holder, n, (c) => h.update(c, id, own(olds), n));
  return { outs: plain(outs) };
}

/** `delete`: an object already gone is not an error. */
export async function remove(kind: string, holder: Holder, id: string, props: Props): Promise<void> {
  const p = own(props);
  const h = handlerOf(kind);
  await withClient(holder, p, (c) => h.delete(c, id, p));
}
