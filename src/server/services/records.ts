// What every service does first: load a user's record by the id a client gave, or 404 as if it did
// not exist (another user's record included); check a change's precondition against the record as a
// GET shows it (wire contract §6).
import { checkIfMatch } from '../http/conditional';
import { badRequest, notFound } from '../service-error';
import type { Kind } from '../store/docs';
import type { Row, StoreOps } from '../store/port';
import { idParam } from '../uris';

/** The record `kind` with id `id` (as written in a path), owned by `owner` (and under `parentId` when given), or 404. */
export async function ownedRecord<K extends Kind>(store: StoreOps, kind: K, owner: string, id: string, parentId?: number): Promise<Row<K>> {
  const row = await store.get(kind, idParam(id));
  if (!row || row.owner !== owner || (parentId !== undefined && row.parentId !== parentId)) throw notFound(`no ${kind} ${id}`);
  return row;
}

/** A change's `If-Match` (when the client sent one) against the record's current digest: 412 when they differ. */
export function ifMatch(header: string | string[] | undefined, current: { digest?: string | undefined }): void {
  checkIfMatch(header, current.digest);
}

/** A required, non-blank text field of a request document (400 otherwise). */
export function requireText(v: string | undefined, field: string): string {
  if (v === undefined || v.trim() === '') throw badRequest(`${field} is required`);
  return v.trim();
}
