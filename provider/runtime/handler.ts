// What each resource kind supplies to the dispatcher, and the one diff all kinds share: a change to a
// property in `replaceOn` replaces, any other input change updates in place (design/pulumi-and-action.md:
// the host keeps only `changes`, `replaces` and `deleteBeforeReplace`).
import type { Client } from '../../src/client';
import { isForgeError } from '../../src/errors';
import { containsUnknown, isRecord, same, type Inputs, type Props } from './values';

export interface Handler {
  /** The input properties, in the order they are compared. */
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
  create(client: Client, inputs: Props): Promise<{ id: string; outs: Props }>;
  /** The object as it is now on the service, or undefined when it is gone. */
  read(client: Client, id: string, props: Props): Promise<Props | undefined>;
  update(client: Client, id: string, olds: Props, news: Props): Promise<Props>;
  delete(client: Client, id: string, props: Props): Promise<void>;
}

/** Inputs that only steer the provider: a change is recorded in state, never replaces. */
const STEERING = new Set(['timeout']);
/** Matters for a create only: dropping it after the take-over is no change at all. */
const CREATE_ONLY = new Set(['adopt']);

export interface DiffAnswer { changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }

export function diffProps(h: Handler, olds: Props, news: Props): DiffAnswer {
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

/** The service answered 404: the object is gone. */
export const isNotFound = (e: unknown): boolean => isForgeError(e, 'E_API') && e.status === 404;
/** The service answered 409: the object exists already. */
export const isConflict = (e: unknown): boolean => isForgeError(e, 'E_API') && e.status === 409;

/** A last path segment (an id) of a URI. */
export const lastId = (uri: string): string => decodeURIComponent(uri.split('/').pop() ?? '');

/** The message for a create that met an existing object. */
export function existsMessage(what: string): string {
  return `${what} already exists on the service; set \`adopt: true\` to take it over, or change its name or version`;
}

/** The result, or undefined when the service says 404 (for `read`). */
export async function unlessGone<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** A delete that tolerates an object already gone. */
export async function deleteIfThere(p: Promise<unknown>): Promise<void> {
  await unlessGone(p);
}

/** `name`, `version`, `description`: how every library object is named. */
export function checkNamed(r: Inputs): Props {
  return {
    name: r.string('name', { required: true }),
    version: r.string('version', { required: true }),
    description: r.string('description'),
  };
}
