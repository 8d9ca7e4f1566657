// What each resource kind supplies to the dispatcher, and the one diff all kinds share: a change to a
// property in `replaceOn` replaces, any other input change updates in place (design/pulumi-and-action.md:
// the host keeps only `changes`, `replaces` and `deleteBeforeReplace`).
import type { Client } from '../../src/client';
import type { Outs, ResourceKind } from '../shapes';
import type { Settings } from './connection';
import type { CheckFailure, Inputs } from './inputs';
import { containsUnknown, isRecord, same, type Props } from './plain';

/** Inputs every kind takes beside its own (their checks are the dispatcher's). */
export interface CommonInputs { connection?: Settings; adopt?: boolean }

/**
 * A kind's calls. `I` is what its `check` returns once every value is known: the engine passes exactly
 * that back to create, update and delete, and keeps it (with the outputs) as the state read gets.
 */
export interface Handler<I extends CommonInputs = CommonInputs> {
  /** The input properties, in the order they are compared (shapes.ts). */
  readonly inputs: readonly string[];
  /** Input properties whose change replaces the object. */
  readonly replaceOn: readonly string[];
  /**
   * Object inputs of which only some members move the object (an account's URLs do, its password does
   * not); `connection` is always judged by its `url` and `user`.
   */
  readonly replaceOnMembers?: Readonly<Record<string, readonly string[]>>;
  /**
   * Properties that name the object on the service (name and version): a replacement that keeps them
   * would meet a 409 from the object it replaces, so it must delete first.
   */
  readonly identity: readonly string[];
  /** Validates and normalizes inputs; never calls the service (inputs may hold UNKNOWN). */
  check(r: Inputs): Props;
  /**
   * After `check`, in the preview too: asks the service (reads only) for what only it knows (a distribution,
   * a package, a format) and returns one failure per property it does not accept. `skip`: a property that
   * already failed. Values still UNKNOWN are left alone.
   */
  preflight?(client: Client, inputs: Props, skip: (property: string) => boolean): Promise<CheckFailure[]>;
  create(client: Client, inputs: State<I>): Promise<{ id: string; outs: Props }>;
  /** The object as it is now on the service, or undefined when it is gone. */
  read(client: Client, id: string, props: State<I>): Promise<Props | undefined>;
  update(client: Client, id: string, olds: State<I>, news: State<I>): Promise<Props>;
  delete(client: Client, id: string, props: State<I>): Promise<void>;
}

/**
 * What the engine passes back: the checked inputs, and in state the outputs beside them (read those with
 * the readers of plain.ts: state may come from an older release).
 */
export type State<I> = I & Props;

/** Inputs that only steer the provider: a change is recorded in state, never replaces. */
const STEERING = new Set(['timeout']);
/** Matters for a create only: dropping it after the take-over is no change at all. */
const CREATE_ONLY = new Set(['adopt']);

export interface DiffAnswer { changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }

export function diffProps(h: Handler<CommonInputs>, olds: Props, news: Props): DiffAnswer {
  const compared = h.inputs.filter((k) => !CREATE_ONLY.has(k));
  const changed = compared.filter((k) => !STEERING.has(k) && (containsUnknown(news[k]) || !same(olds[k], news[k])));
  const members: Readonly<Record<string, readonly string[]>> = { connection: ['url', 'user'], ...h.replaceOnMembers };
  const replaces = changed.filter((k) => h.replaceOn.includes(k) || (members[k] !== undefined && movesObject(members[k], olds[k], news[k])));
  const keepsIdentity = h.identity.every((k) => !containsUnknown(news[k]) && same(olds[k], news[k]));
  return {
    changes: changed.length > 0 || compared.some((k) => STEERING.has(k) && !same(olds[k], news[k])),
    replaces,
    deleteBeforeReplace: replaces.length > 0 && keepsIdentity && !replaces.includes('connection'),
  };
}

/** A connection to another service or user moves the object; new keys alone do not. */
function movesObject(keys: readonly string[], a: unknown, b: unknown): boolean {
  const pick = (v: unknown) => (isRecord(v) ? keys.map((k) => v[k]) : v);
  return containsUnknown(pick(b)) || !same(pick(a), pick(b));
}

/** The state after a create or update: the inputs and every output of the kind, by name (shapes.ts). */
export function withOutputs<K extends ResourceKind>(_kind: K, inputs: object, outs: Outs<K>): Props {
  return { ...inputs, ...outs };
}
