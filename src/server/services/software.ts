// The software library (spec rule 4): components (409 on the same name and version), their
// artifacts, and the artifacts' files, uploaded as a stream and served back.
import { RULES, type Rule } from '../../model/field-rules';
import type { DocumentOf, MySoftware, SoftwareArtifact } from '../../model/resources';
import { hasNonXmlChar } from '../../model/text-rules';
import { lateDigestsOf } from '../blobs/late-digests';
import type { Ctx } from '../context';
import { etagOfText, quoteEtag } from '../http/conditional';
import type { FileResult } from '../http/handler';
import { badRequest, conflict, notFound, ServiceError } from '../service-error';
import type { ArtifactDoc, SoftwareDoc } from '../store/docs';
import { nameVersionKey } from '../store/keys';
import type { Row, StoreOps } from '../store/port';
import { artifactView, softwareView } from '../views/software';
import type { Located } from '../views/stamp';
import { uris } from '../uris';
import { ifMatch, ownedRecord, requireText } from './records';

/** `v` where it follows the rule; a 400 "<field> "<v>" must be <what the rule says>" where it does not. */
function ruled(field: string, r: Rule, v: string): string {
  if (!r.test(v)) throw badRequest(`${field} ${JSON.stringify(v)} must be ${r.says}`);
  return v;
}

/**
 * Wire contract §9: a plain file name. `/`, `\`, `..`, NUL or another control character — as sent
 * or once more percent-decoded — is refused with 400, never cleaned up silently.
 */
function checkFileName(name: string): string {
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

async function bumpSoftware(t: StoreOps, id: number): Promise<void> {
  const s = await t.get('software', id);
  if (s) await t.update('software', id, { ...s.doc, revision: s.doc.revision + 1 });
}

const loadSoftware = (ctx: Ctx, uid: string, msid: string): Promise<Row<'software'>> => ownedRecord(ctx.store, 'software', uid, msid);

async function loadArtifact(ctx: Ctx, uid: string, msid: string, said: string): Promise<Row<'artifact'>> {
  return ownedRecord(ctx.store, 'artifact', uid, said, (await loadSoftware(ctx, uid, msid)).id);
}

/** A read of artifacts or of a file waits for the checksums an upload's answer left for later; then the records are read again. */
async function afterDigests<T>(ctx: Ctx, rows: ReadonlyArray<Row<'artifact'>>, again: () => Promise<T>, now: T): Promise<T> {
  const late = lateDigestsOf(ctx);
  const waits = rows.flatMap((r) => late.pendingFor(r) ?? []);
  if (waits.length === 0) return now;
  await Promise.all(waits);
  return again();
}

function artifactFile(ctx: Ctx, r: Row<'artifact'>, fileName?: string): FileResult {
  const f = r.doc.file;
  if (!f || (fileName !== undefined && fileName !== f.fileName)) throw notFound('no file uploaded under this name');
  return { open: () => ctx.blobs.open(f.path), size: f.size, contentType: f.mimeType, fileName: f.fileName, etag: f.sha256 === undefined ? etagOfText(f.path) : quoteEtag(f.sha256), lastModified: f.stored };
}

async function removeArtifacts(ctx: Ctx, rows: Array<Row<'artifact'>>, softwareId: number): Promise<void> {
  await ctx.store.tx(async (t) => {
    for (const r of rows) await t.remove('artifact', r.id);
    await bumpSoftware(t, softwareId);
  });
  for (const r of rows) await ctx.blobs.remove(r.doc.file?.path);
}

/** An upload's bytes and what its request says of them. */
export interface UploadBody {
  readonly source: AsyncIterable<Uint8Array>;
  /** Content-Length, when the request has one. */
  readonly declaredBytes?: number | undefined;
  readonly contentType?: string | undefined;
}

export const software = {
  async list(ctx: Ctx, uid: string): Promise<Array<Located<MySoftware>>> {
    return Promise.all((await ctx.store.list('software', uid)).map((r) => softwareView(ctx, r)));
  },

  async get(ctx: Ctx, uid: string, msid: string): Promise<Located<MySoftware>> {
    return softwareView(ctx, await loadSoftware(ctx, uid, msid));
  },

  async create(ctx: Ctx, uid: string, v: MySoftware): Promise<Located<MySoftware>> {
    const d: SoftwareDoc = {
      name: requireText(v.name, 'name'),
      version: requireText(v.version, 'version'),
      revision: 0,
      description: v.description,
      tag: v.tag,
    };
    return softwareView(ctx, await ctx.store.insert('software', { owner: uid, uniqueKey: nameVersionKey(d), doc: d }, conflictMsg(d)));
  },

  async update(ctx: Ctx, uid: string, msid: string, body: () => MySoftware, precondition?: string | string[]): Promise<Located<MySoftware>> {
    const row = await loadSoftware(ctx, uid, msid);
    ifMatch(precondition, await softwareView(ctx, row));
    const v = body();
    const d: SoftwareDoc = { ...row.doc, revision: row.doc.revision + 1 };
    if (v.name !== undefined) d.name = requireText(v.name, 'name');
    if (v.version !== undefined) d.version = requireText(v.version, 'version');
    if (v.description !== undefined) d.description = v.description;
    if (v.tag !== undefined) d.tag = v.tag;
    return softwareView(ctx, await ctx.store.update('software', row.id, d, { uniqueKey: nameVersionKey(d) }, conflictMsg(d)));
  },

  async remove(ctx: Ctx, uid: string, msid: string, precondition?: string | string[]): Promise<void> {
    const row = await loadSoftware(ctx, uid, msid);
    ifMatch(precondition, await softwareView(ctx, row));
    // The "used by a template" check and the delete are one transaction, the files go after it:
    // a template update cannot add the component in between.
    const artifacts = await ctx.store.tx(async (t) => {
      const users = (await t.list('appliance', row.owner)).filter((a) => a.doc.softwareIds.includes(row.id));
      if (users.length > 0) throw conflict(`the component is used by ${users.map((a) => uris.appliance(a.owner, a.id)).join(', ')}`);
      const rows = await t.list('artifact', row.owner, row.id);
      for (const r of rows) await t.remove('artifact', r.id);
      await t.remove('software', row.id);
      return rows;
    });
    for (const r of artifacts) await ctx.blobs.remove(r.doc.file?.path);
  },

  async artifacts(ctx: Ctx, uid: string, msid: string, fileName: string | undefined): Promise<Array<Located<SoftwareArtifact>>> {
    const sw = await loadSoftware(ctx, uid, msid);
    const read = () => ctx.store.list('artifact', sw.owner, sw.id);
    const first = await read();
    const rows = await afterDigests(ctx, first, read, first);
    const items = rows.map(artifactView);
    return fileName === undefined ? items : items.filter((a) => a.name === fileName || a.origName === fileName || a.fullName === fileName);
  },

  async addArtifact(ctx: Ctx, uid: string, msid: string, body: () => SoftwareArtifact): Promise<Located<SoftwareArtifact>> {
    const sw = await loadSoftware(ctx, uid, msid);
    const d = artifactFromBody(body());
    const row = await ctx.store.tx(async (t) => {
      const r = await t.insert('artifact', { owner: sw.owner, parentId: sw.id, doc: d });
      await bumpSoftware(t, sw.id);
      return r;
    });
    return artifactView(row);
  },

  async artifact(ctx: Ctx, uid: string, msid: string, said: string): Promise<Located<SoftwareArtifact>> {
    const row = await loadArtifact(ctx, uid, msid, said);
    return artifactView(await afterDigests(ctx, [row], () => loadArtifact(ctx, uid, msid, said), row));
  },

  async updateArtifact(ctx: Ctx, uid: string, msid: string, said: string, body: () => SoftwareArtifact, precondition?: string | string[]): Promise<Located<SoftwareArtifact>> {
    const row = await loadArtifact(ctx, uid, msid, said);
    ifMatch(precondition, artifactView(row));
    const doc = artifactFromBody(body(), row.doc);
    const updated = await ctx.store.tx(async (t) => {
      if (!(await t.get('artifact', row.id))) throw notFound(`no artifact ${said}`);
      const r = await t.update('artifact', row.id, doc);
      await bumpSoftware(t, row.parentId!);
      return r;
    });
    return artifactView(updated);
  },

  async updateArtifacts(ctx: Ctx, uid: string, msid: string, body: () => DocumentOf<'softwareArtifacts'>): Promise<Array<Located<SoftwareArtifact>>> {
    const sw = await loadSoftware(ctx, uid, msid);
    const value = body();
    const rows = await ctx.store.list('artifact', sw.owner, sw.id);
    const updates = (value.softwareArtifacts ?? []).map((a, i) => {
      const id = a.dbId ?? Number(/\/artifacts\/(\d+)$/.exec(a.uri ?? '')?.[1] ?? NaN);
      const row = rows.find((r) => r.id === id);
      if (!row) throw badRequest(`softwareArtifacts[${i}] names no artifact of this component (give dbId or uri)`);
      return { row, doc: artifactFromBody(a, row.doc) };
    });
    await ctx.store.tx(async (t) => {
      for (const u of updates) await t.update('artifact', u.row.id, u.doc);
      if (updates.length > 0) await bumpSoftware(t, sw.id);
    });
    return (await ctx.store.list('artifact', sw.owner, sw.id)).map(artifactView);
  },

  async removeArtifact(ctx: Ctx, uid: string, msid: string, said: string, precondition?: string | string[]): Promise<void> {
    const row = await loadArtifact(ctx, uid, msid, said);
    ifMatch(precondition, artifactView(row));
    await removeArtifacts(ctx, [row], row.parentId!);
  },

  async removeArtifacts(ctx: Ctx, uid: string, msid: string): Promise<void> {
    const sw = await loadSoftware(ctx, uid, msid);
    await removeArtifacts(ctx, await ctx.store.list('artifact', sw.owner, sw.id), sw.id);
  },

  /** Stores the bytes as the artifact's file (replacing the one it had); the answer may come before their checksums (local store). */
  async upload(ctx: Ctx, uid: string, msid: string, said: string, fileNameParam: string | undefined, body: UploadBody): Promise<Located<SoftwareArtifact>> {
    const art = await loadArtifact(ctx, uid, msid, said);
    const fileName = checkFileName(fileNameParam ?? art.doc.origName ?? art.doc.name);
    const declared = body.declaredBytes;
    if (declared !== undefined && declared > ctx.limits.uploadBytes) throw new ServiceError(413, `upload larger than the limit of ${ctx.limits.uploadBytes} bytes`);
    // The owner's other files count against the quota; the file this one replaces does not.
    const room = ctx.limits.storageBytesPerUser - (await storedBytes(ctx, art.owner, art.id));
    if (declared !== undefined && declared > room) throw overQuota(ctx, room);
    const max = Math.min(ctx.limits.uploadBytes, Math.max(room, 0));
    const written = await ctx.blobs.write(body.source, 'files', 'upload', max, declared, { lateDigests: true }).catch((e: unknown) => {
      // Cut off at the quota rather than at the upload limit: the quota's 507.
      throw max < ctx.limits.uploadBytes && e instanceof ServiceError && e.statusCode === 413 ? overQuota(ctx, room) : e;
    });
    const mime = (body.contentType ?? 'application/octet-stream').split(';')[0]!.trim() || 'application/octet-stream';
    let old: string | undefined;
    let over = false;
    const row = await ctx.store.tx(async (t) => {
      const cur = await t.get('artifact', art.id);
      if (!cur) return undefined;
      // Uploads of the same owner at once: the quota is checked again where the records are written.
      const others = (await t.list('artifact', art.owner)).reduce((n, a) => n + (a.id === art.id ? 0 : (a.doc.file?.size ?? 0)), 0);
      if (others + written.size > ctx.limits.storageBytesPerUser) return void (over = true);
      old = cur.doc.file?.path;
      const next: ArtifactDoc = {
        ...cur.doc,
        origName: cur.doc.origName ?? fileName,
        file: { path: written.key, fileName, size: written.size, sha256: written.sha256, md5: written.md5, mimeType: mime, stored: ctx.store.now() },
      };
      const r = await t.update('artifact', art.id, next);
      await bumpSoftware(t, art.parentId!);
      return r;
    });
    if (!row) {
      await ctx.blobs.remove(written.key);
      throw over ? overQuota(ctx, ctx.limits.storageBytesPerUser - (await storedBytes(ctx, art.owner, art.id))) : notFound('the artifact was deleted during the upload');
    }
    if (old && old !== written.key) await ctx.blobs.remove(old);
    if (written.sha256 === undefined || written.md5 === undefined) lateDigestsOf(ctx).schedule(art.id, art.owner);
    return artifactView(row);
  },

  async download(ctx: Ctx, uid: string, msid: string, said: string, fileName?: string): Promise<FileResult> {
    const row = await loadArtifact(ctx, uid, msid, said);
    return artifactFile(ctx, await afterDigests(ctx, [row], () => loadArtifact(ctx, uid, msid, said), row), fileName);
  },
};

/** The bytes of the files `owner` keeps, but for artifact `except`'s (which an upload replaces). */
async function storedBytes(ctx: Ctx, owner: string, except: number): Promise<number> {
  return (await ctx.store.list('artifact', owner)).reduce((n, a) => n + (a.id === except ? 0 : (a.doc.file?.size ?? 0)), 0);
}

/** 507: the owner's quota of stored files has `room` bytes left (maybe none). */
function overQuota(ctx: Ctx, room: number): ServiceError {
  const mib = (n: number): string => `${Math.max(0, Math.floor(n / 1024 ** 2))} MiB`;
  return new ServiceError(507, `this upload does not fit in your storage quota of ${mib(ctx.limits.storageBytesPerUser)} for software files (${mib(room)} left): delete files you no longer need, or ask the server's operator for more`);
}
