// How the runtime reads the service's answers: a 404 is "gone" (read, delete), a 409 is "exists already"
// (create, with the way out: `adopt`).
import { ApiError } from '../../src/client/errors';
import { isForgeError } from '../../src/errors';
import { isNotFound } from '../../src/engine/remove';
import { ProviderError } from './errors';

/** The service answered 409: the object exists already. */
export const isConflict = (e: unknown): boolean => isForgeError(e, ApiError) && e.status === 409;

/** The message for a create that met an existing object. */
export function existsMessage(what: string): string {
  return `${what} already exists on the service; set \`adopt: true\` to take it over, or change its name or version`;
}

/** A create whose 409 becomes the `adopt` hint. */
export async function created<T>(what: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (isConflict(e)) throw new ProviderError('exists', existsMessage(what), {}, { cause: e });
    throw e;
  }
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
