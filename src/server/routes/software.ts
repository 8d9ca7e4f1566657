// The software library (spec rule 4): components (409 on the same name and version), their
// artifacts, and the artifacts' files, uploaded as a stream and served back.
import type { Readable } from 'node:stream';
import { RULES, type Rule } from '../../model/field-rules';
import type { SoftwareArtifact } from '../../model/resources';
import type { Ctx } from '../context';
import { etagOfText, quoteEtag } from '../http/conditional';
import { NO_CONTENT, type FileResult, type Req, type ReqWith, type Routes } from '../http/handler';
import { page } from '../http/list';
import { badRequest, conflict, notFound, ServiceError } from '../service-error';
import type { ArtifactDoc, SoftwareDoc } from '../store/docs';
import type { Row } from '../store/store';
import { nameVersionKey } from '../store/keys';
import { artifactView, softwareView } from '../views/software';
import type { Located } from '../views/stamp';
import { uris } from '../uris';
import { hasNonXmlChar } from '../../model/text-rules';
import { lateDigests, type LateDigests } from '../files/late-digests';
import { ifMatch, owned, requireText } from './common';

/** `v` where it follows the rule; a 400 "<field> "<v>" must be <what the rule says>" where it does not. */
function ruled(field: string, r: Rule, v: string): string {
  if (!r.test(v)) throw badRequest(`${field} ${JSON.stringify(v)} must be ${r.says}`);
  return v;
}

/**
 * Wire contract §9: a plain file name. `/`, `\`, `..`, NUL or another control character — as sent
 * or once more percent-decoded — is refused with 400, never cleaned up silently.
 */
export function checkFileName(name: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    throw badRequest('fileName is not a valid percent-encoded name');
  }
  // U+FFFE/U+FFFF (and any other character XML cannot carry) would make every XML view of the artifact ill-formed.
  for (const f of [name, decoded]) if (!RULES.fileName.test(f) || hasNonXmlChar(f)) throw badRequest(`fileName ${JSON.stringify(name)} must be ${RULES.fileName.says}`);
  return name;
}

function artifactFromBody(v: SoftwareArtifact, prev?: ArtifactDoc): ArtifactDoc {
  const d: ArtifactDoc = { ...(prev ?? { name: '', kind: 'SoftwareFile' }) };
  if (v.name !== undefined) d.name = v.name;
  d.name = requireText(d.name, 'name');
  for (const f of ['fullName', 'origName', 'type', 'version'] as const) if (v[f] !== undefined) d[f] = v[f];
  // A file's place, mode and owner in the image: the same rules as the engine's and the provider's.
  for (const f of ['installLocation', 'rights', 'ownerGroup'] as const) {
    const value = v[f];
    if (value !== undefined) d[f] = ruled(f, RULES[f], value);
  }
  return d;
}

const conflictMsg = (d: SoftwareDoc): string => `a software component named ${JSON.stringify(d.name)} version ${JSON.stringify(d.version)} already exists`;

function bumpSoftware(ctx: Ctx, id: number): void {
  const s = ctx.store.get('software', id);
  if (s) ctx.store.update('software', id, { ...s.doc, revision: s.doc.revision + 1 });
}

function loadSoftware(ctx: Ctx, req: ReqWith<'uid' | 'msid'>): Row<'software'> {
  return owned(ctx, req, 'software', 'msid');
}

function loadArtifact(ctx: Ctx, req: ReqWith<'uid' | 'msid' | 'said'>): Row<'artifact'> {
  return owned(ctx, req, 'artifact', 'said', loadSoftware(ctx, req).id);
}

function artifactFile(ctx: Ctx, r: Row<'artifact'>, fileName?: string): FileResult {
  const f = r.doc.file;
  if (!f || (fileName !== undefined && fileName !== f.fileName)) throw notFound('no file uploaded under this name');
  return { file: ctx.files.read(f.path), size: f.size, contentType: f.mimeType, fileName: f.fileName, etag: f.sha256 === undefined ? etagOfText(f.path) : quoteEtag(f.sha256), lastModified: f.stored };
}

async function removeArtifacts(ctx: Ctx, rows: Array<Row<'artifact'>>): Promise<void> {
  ctx.store.tx(() => rows.forEach((r) => ctx.store.remove('artifact', r.id)));
  for (const r of rows) await ctx.files.remove(r.doc.file?.path);
}

async function upload(ctx: Ctx, late: LateDigests, req: Req<'mySoftwareArtifact_upload'>, fileNameParam: string | undefined): Promise<Located<SoftwareArtifact>> {
  const art = loadArtifact(ctx, req);
  const fileName = checkFileName(fileNameParam ?? art.doc.origName ?? art.doc.name);
  const declared = Number(req.raw.headers['content-length'] ?? NaN);
  if (declared > ctx.limits.uploadBytes) throw new ServiceError(413, `upload larger than the limit of ${ctx.limits.uploadBytes} bytes`);
  const body = req.raw.body as Readable | undefined;
  const source: AsyncIterable<Uint8Array> = body && typeof body.pipe === 'function' ? body : (async function* () {})();
  const written = await ctx.files.write(source, 'files', 'upload', ctx.limits.uploadBytes, Number.isFinite(declared) ? declared : undefined, { lateDigests: true });
  const mime = (req.raw.headers['content-type'] ?? 'application/octet-stream').split(';')[0]!.trim() || 'application/octet-stream';
  let old: string | undefined;
  const row = ctx.store.tx(() => {
    const cur = ctx.store.get('artifact', art.id);
    if (!cur) return undefined;
    old = cur.doc.file?.path;
    const next: ArtifactDoc = {
      ...cur.doc,
      origName: cur.doc.origName ?? fileName,
      file: { path: written.path, fileName, size: written.size, sha256: written.sha256, md5: written.md5, mimeType: mime, stored: ctx.store.now() },
    };
    const r = ctx.store.update('artifact', art.id, next);
    bumpSoftware(ctx, art.parentId!);
    return r;
  });
  if (!row) {
    await ctx.files.remove(written.path);
    throw notFound('the artifact was deleted during the upload');
  }
  if (old && old !== written.path) await ctx.files.remove(old);
  if (written.sha256 === undefined || written.md5 === undefined) late.schedule(art.id);
  return artifactView(row);
}

export const softwareRoutes = (ctx: Ctx) => {
  const late = lateDigests(ctx);
  // A read of artifacts or of a file waits for the checksums an upload's answer left for later; `answer`
  // reads the records again only when it `waited` (they went in meanwhile), so a read with nothing to wait for reads once.
  const afterDigests = <T>(rows: ReadonlyArray<Row<'artifact'>>, answer: (waited: boolean) => T): T | Promise<T> => {
    const waits = rows.flatMap((r) => late.pendingFor(r) ?? []);
    return waits.length === 0 ? answer(false) : Promise.all(waits).then(() => answer(true));
  };
  return {
    mySoftware_getAll: (req) => {
      const { uid } = req.params;
      // `distribId` is accepted and ignored: components are not tied to a distribution here.
      const rows = ctx.store.list('software', uid);
      const { total, items } = page('mySoftware', rows.map((r) => softwareView(ctx, r)), req.query);
      return req.ok({ total, mySoftwareList: items });
    },

    mySoftware_get: (req) => req.ok(softwareView(ctx, loadSoftware(ctx, req))),

    mySoftware_create: (req) => {
      const { value: v } = req.body();
      const d: SoftwareDoc = {
        name: requireText(v.name, 'name'),
        version: requireText(v.version, 'version'),
        revision: 0,
        description: v.description,
        tag: v.tag,
      };
      const row = ctx.store.insert('software', { owner: req.params.uid, uniqueKey: nameVersionKey(d), doc: d }, conflictMsg(d));
      return req.created(softwareView(ctx, row));
    },

    mySoftware_update: (req) => {
      const row = loadSoftware(ctx, req);
      ifMatch(req, softwareView(ctx, row));
      const { value: v } = req.body();
      const d: SoftwareDoc = { ...row.doc, revision: row.doc.revision + 1 };
      if (v.name !== undefined) d.name = requireText(v.name, 'name');
      if (v.version !== undefined) d.version = requireText(v.version, 'version');
      if (v.description !== undefined) d.description = v.description;
      if (v.tag !== undefined) d.tag = v.tag;
      return req.ok(softwareView(ctx, ctx.store.update('software', row.id, d, { uniqueKey: nameVersionKey(d) }, conflictMsg(d))));
    },

    mySoftware_delete: async (req) => {
      const row = loadSoftware(ctx, req);
      ifMatch(req, softwareView(ctx, row));
      // The "used by a template" check and the delete are one transaction, the files go after it:
      // a template update cannot add the component in between.
      const artifacts = ctx.store.tx(() => {
        const users = ctx.store.list('appliance', row.owner).filter((a) => a.doc.softwareIds.includes(row.id));
        if (users.length > 0) throw conflict(`the component is used by ${users.map((a) => uris.appliance(a.owner, a.id)).join(', ')}`);
        const rows = ctx.store.list('artifact', row.owner, row.id);
        for (const r of rows) ctx.store.remove('artifact', r.id);
        ctx.store.remove('software', row.id);
        return rows;
      });
      for (const r of artifacts) await ctx.files.remove(r.doc.file?.path);
      return NO_CONTENT;
    },

    mySoftwareArtifact_getAll: (req) => {
      const sw = loadSoftware(ctx, req);
      const answer = (rows: Array<Row<'artifact'>>) => {
        let items = rows.map(artifactView);
        const fn = req.query.filename;
        if (fn !== undefined) items = items.filter((a) => a.name === fn || a.origName === fn || a.fullName === fn);
        return req.ok({ total: items.length, softwareArtifacts: items });
      };
      const rows = ctx.store.list('artifact', sw.owner, sw.id);
      return afterDigests(rows, (waited) => answer(waited ? ctx.store.list('artifact', sw.owner, sw.id) : rows));
    },

    mySoftwareArtifact_add: (req) => {
      const sw = loadSoftware(ctx, req);
      const { value } = req.body();
      const d = artifactFromBody(value);
      const row = ctx.store.tx(() => {
        const r = ctx.store.insert('artifact', { owner: sw.owner, parentId: sw.id, doc: d });
        bumpSoftware(ctx, sw.id);
        return r;
      });
      return req.created(artifactView(row));
    },

    mySoftwareArtifact_get: (req) => {
      const row = loadArtifact(ctx, req);
      return afterDigests([row], (waited) => req.ok(artifactView(waited ? loadArtifact(ctx, req) : row)));
    },

    mySoftwareArtifact_update: (req) => {
      const row = loadArtifact(ctx, req);
      ifMatch(req, artifactView(row));
      const { value } = req.body();
      const updated = ctx.store.tx(() => {
        const r = ctx.store.update('artifact', row.id, artifactFromBody(value, row.doc));
        bumpSoftware(ctx, row.parentId!);
        return r;
      });
      return req.ok(artifactView(updated));
    },

    mySoftwareArtifact_updateAll: (req) => {
      const sw = loadSoftware(ctx, req);
      const { value } = req.body();
      const rows = ctx.store.list('artifact', sw.owner, sw.id);
      const updates = (value.softwareArtifacts ?? []).map((a, i) => {
        const id = a.dbId ?? Number(/\/artifacts\/(\d+)$/.exec(a.uri ?? '')?.[1] ?? NaN);
        const row = rows.find((r) => r.id === id);
        if (!row) throw badRequest(`softwareArtifacts[${i}] names no artifact of this component (give dbId or uri)`);
        return { row, doc: artifactFromBody(a, row.doc) };
      });
      ctx.store.tx(() => {
        for (const u of updates) ctx.store.update('artifact', u.row.id, u.doc);
        if (updates.length > 0) bumpSoftware(ctx, sw.id);
      });
      const items = ctx.store.list('artifact', sw.owner, sw.id).map(artifactView);
      return req.ok({ total: items.length, softwareArtifacts: items });
    },

    mySoftwareArtifact_delete: async (req) => {
      const row = loadArtifact(ctx, req);
      ifMatch(req, artifactView(row));
      await removeArtifacts(ctx, [row]);
      bumpSoftware(ctx, row.parentId!);
      return NO_CONTENT;
    },

    mySoftwareArtifact_deleteAll: async (req) => {
      const sw = loadSoftware(ctx, req);
      await removeArtifacts(ctx, ctx.store.list('artifact', sw.owner, sw.id));
      bumpSoftware(ctx, sw.id);
      return NO_CONTENT;
    },

    mySoftwareArtifact_upload: async (req) => req.ok(await upload(ctx, late, req, req.params.fileName)),
    mySoftwareArtifact_download: (req) => {
      const row = loadArtifact(ctx, req);
      return afterDigests([row], (waited) => artifactFile(ctx, waited ? loadArtifact(ctx, req) : row));
    },
    mySoftwareArtifact_downloadFile: (req) => {
      const row = loadArtifact(ctx, req);
      return afterDigests([row], (waited) => artifactFile(ctx, waited ? loadArtifact(ctx, req) : row, req.params.fileName));
    },
  } satisfies Partial<Routes>;
};
