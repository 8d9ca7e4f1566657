// Small helpers shared by the routes files: load a user's record by path id or 404, check If-Match.
import type { Ctx } from '../context';
import { checkIfMatch } from '../http/conditional';
import type { ReqBase, ReqWith } from '../http/handler';
import { badRequest, notFound } from '../service-error';
import type { Kind } from '../store/docs';
import type { Row } from '../store/store';
import { idParam } from '../uris';

/** The record `kind` with id `req.params[param]`, owned by `{uid}` (and under `parentId` when given), or 404. */
export function owned<K extends Kind, P extends string>(ctx: Ctx, req: ReqWith<'uid' | P>, kind: K, param: P, parentId?: number): Row<K> {
  const row = ctx.store.get(kind, idParam(req.params[param]));
  if (!row || row.owner !== req.params.uid || (parentId !== undefined && row.parentId !== parentId)) {
    throw notFound(`no ${kind} ${req.params[param]}`);
  }
  return row;
}

/** PUT/DELETE precondition against the record as a GET would show it (wire contract §6). */
export function ifMatch(req: ReqBase, current: { digest?: string | undefined }): void {
  checkIfMatch(req.raw.headers['if-match'], current.digest);
}

/** A required, non-blank text field of a request document (400 otherwise). */
export function requireText(v: string | undefined, field: string): string {
  if (v === undefined || v.trim() === '') throw badRequest(`${field} is required`);
  return v.trim();
}
