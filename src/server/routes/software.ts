// The software library (spec rule 4): the HTTP face of services/software.ts.
import type { Readable } from 'node:stream';
import type { Ctx } from '../context';
import { NO_CONTENT, type Routes } from '../http/handler';
import { page } from '../http/list';
import { software, type UploadBody } from '../services/software';

/** The request's bytes as a stream (an empty one when it has no body), and what its headers say of them. */
function uploadBody(raw: { body?: unknown; headers: Readonly<Record<string, string | string[] | undefined>> }): UploadBody {
  const body = raw.body as Readable | undefined;
  const declared = Number(raw.headers['content-length'] ?? NaN);
  const type = raw.headers['content-type'];
  return {
    source: body && typeof body.pipe === 'function' ? body : (async function* () {})(),
    declaredBytes: Number.isFinite(declared) ? declared : undefined,
    contentType: typeof type === 'string' ? type : undefined,
  };
}

export const softwareRoutes = (ctx: Ctx) =>
  ({
    // `distribId` is accepted and ignored: components are not tied to a distribution here.
    mySoftware_getAll: async (req) => {
      const { total, items } = page('mySoftware', await software.list(ctx, req.params.uid), req.query);
      return req.ok({ total, mySoftwareList: items });
    },
    mySoftware_get: async (req) => req.ok(await software.get(ctx, req.params.uid, req.params.msid)),
    mySoftware_create: async (req) => req.created(await software.create(ctx, req.params.uid, req.body().value)),
    mySoftware_update: async (req) => req.ok(await software.update(ctx, req.params.uid, req.params.msid, () => req.body().value, req.raw.headers['if-match'])),
    mySoftware_delete: async (req) => {
      await software.remove(ctx, req.params.uid, req.params.msid, req.raw.headers['if-match']);
      return NO_CONTENT;
    },
    mySoftwareArtifact_getAll: async (req) => {
      const items = await software.artifacts(ctx, req.params.uid, req.params.msid, req.query.filename);
      return req.ok({ total: items.length, softwareArtifacts: items });
    },
    mySoftwareArtifact_add: async (req) => req.created(await software.addArtifact(ctx, req.params.uid, req.params.msid, () => req.body().value)),
    mySoftwareArtifact_get: async (req) => req.ok(await software.artifact(ctx, req.params.uid, req.params.msid, req.params.said)),
    mySoftwareArtifact_update: async (req) =>
      req.ok(await software.updateArtifact(ctx, req.params.uid, req.params.msid, req.params.said, () => req.body().value, req.raw.headers['if-match'])),
    mySoftwareArtifact_updateAll: async (req) => {
      const items = await software.updateArtifacts(ctx, req.params.uid, req.params.msid, () => req.body().value);
      return req.ok({ total: items.length, softwareArtifacts: items });
    },
    mySoftwareArtifact_delete: async (req) => {
      await software.removeArtifact(ctx, req.params.uid, req.params.msid, req.params.said, req.raw.headers['if-match']);
      return NO_CONTENT;
    },
    mySoftwareArtifact_deleteAll: async (req) => {
      await software.removeArtifacts(ctx, req.params.uid, req.params.msid);
      return NO_CONTENT;
    },
    mySoftwareArtifact_upload: async (req) => req.ok(await software.upload(ctx, req.params.uid, req.params.msid, req.params.said, req.params.fileName, uploadBody(req.raw))),
    mySoftwareArtifact_download: (req) => software.download(ctx, req.params.uid, req.params.msid, req.params.said),
    mySoftwareArtifact_downloadFile: (req) => software.download(ctx, req.params.uid, req.params.msid, req.params.said, req.params.fileName),
  }) satisfies Partial<Routes>;
