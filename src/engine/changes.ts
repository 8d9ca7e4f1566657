// The plan as data for machines: one object per planned item, {kind, name, action, before, after}, the
// shape of `plan --json`'s `changes` and of the Action's `changes` output. No-ops are listed too
// (action `unchanged` or `reuse`), as terraform lists its no-op resource changes, so that a reader sees
// what an apply would leave alone; `hasChanges` says whether anything would change. No secret
// leaves here: passwords are never copied in, and every text is masked with the run's secrets.
import type { Plan } from './plan';
import type { Removal } from './remove';
import type { SecretSet } from './secrets';

export type ChangeKind = 'appliance' | 'os-profile' | 'package' | 'software' | 'file' | 'image' | 'publication';

/** The plan's own words: `unchanged` and `reuse` change nothing; the others write to the service. */
export type ChangeAction = 'create' | 'update' | 'delete' | 'unchanged' | 'generate' | 'reuse' | 'publish';

type Fields = Readonly<Record<string, unknown>>;

export interface PlanChange {
  readonly kind: ChangeKind;
  readonly name: string;
  readonly action: ChangeAction;
  /** What the service holds now (null: nothing yet, or nothing after a delete for `after`). */
  readonly before: Fields | null;
  readonly after: Fields | null;
  /** Why, in words (what differs, why an image is generated or reused). */
  readonly reason?: string | undefined;
}

const NO_OP: ReadonlySet<ChangeAction> = new Set(['unchanged', 'reuse']);

export function isNoOp(c: PlanChange): boolean {
  return NO_OP.has(c.action);
}

/** Drops undefined fields, so that the JSON holds only what is known. */
function fields(o: Record<string, unknown>): Fields {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

export function planChanges(plan: Plan, secrets?: SecretSet): PlanChange[] {
  const out: PlanChange[] = [];
  const a = plan.appliance;
  out.push({
    kind: 'appliance', name: `${a.name} ${a.version}`, action: a.action,
    before: a.action === 'create' ? null : fields({ uri: a.uri, name: a.name, version: a.version, description: a.current?.description, revision: a.current?.revision }),
    after: fields({ name: a.name, version: a.version, description: a.description }),
    reason: a.changes.join(', ') || undefined,
  });
  const os = plan.osProfile;
  out.push({
    kind: 'os-profile', name: os.name, action: os.action,
    before: os.action === 'create' ? null : fields({ uri: os.uri }),
    after: { name: os.name, standardProfileUri: os.standardProfileUri },
  });
  for (const p of plan.packages.add) out.push({ kind: 'package', name: p.label, action: 'create', before: null, after: { uri: p.uri } });
  for (const p of plan.packages.remove) out.push({ kind: 'package', name: p.label, action: 'delete', before: { uri: p.uri }, after: null });
  for (const s of plan.software) {
    const b = s.bundle;
    out.push({
      kind: 'software', name: `${b.name} ${b.version}`, action: s.action,
      before: s.action === 'create' ? null : fields({ uri: s.uri }),
      after: fields({ name: b.name, version: b.version, description: b.description, files: b.files.map((f) => f.name) }),
      reason: s.action !== 'create' && s.descriptionChanged ? 'description' : undefined,
    });
    for (const f of s.files) {
      out.push({
        kind: 'file', name: `${b.name}/${f.name}`, action: f.action,
        before: f.action === 'create' ? null : { uri: f.artifactUri },
        after: f.action === 'delete' ? null : fields({
          name: f.name, source: f.decl.source, destination: f.decl.destination, rights: f.decl.rights, ownerGroup: f.decl.ownerGroup,
          sha256: f.local?.sha256, size: f.local?.size,
        }),
        reason: f.action === 'update' && f.metadataOnly ? 'metadata only' : undefined,
      });
    }
  }
  for (const i of plan.images) {
    out.push({
      kind: 'image', name: i.format, action: i.action,
      before: i.action === 'reuse' ? fields({ uri: i.uri, revision: i.image.revision, sha256: i.image.sha256sum, pending: i.pending || undefined }) : null,
      after: fields({ format: i.format, installProfile: i.installProfile, compress: i.compress, builders: i.builders }),
      reason: i.reason,
    });
  }
  for (const p of plan.publications) {
    out.push({
      kind: 'publication', name: p.displayName, action: p.action,
      before: p.action === 'reuse' ? fields({ uri: p.uri, cloudId: p.publication.cloudId, pending: p.pending || undefined }) : null,
      after: fields({ displayName: p.displayName, builder: p.builder, account: p.account.name, keystoneUrl: p.account.keystoneUrl, login: p.account.login }),
      reason: p.reason,
    });
  }
  out.push(...removalChanges(plan.removals));
  return secrets ? out.map((c) => maskDeep(c, secrets)) : out;
}

/**
 * Removals (`apply --prune`, `destroy`) as changes: `delete`, with `after` null; objects a destroy
 * leaves are `unchanged`, with why.
 */
export function removalChanges(removals: readonly Removal[], kept: readonly Removal[] = [], secrets?: SecretSet): PlanChange[] {
  const out = [
    ...removals.map((r): PlanChange => ({ kind: r.kind, name: r.name, action: 'delete', before: r.before, after: null, reason: r.reason })),
    ...kept.map((k): PlanChange => ({ kind: k.kind, name: k.name, action: 'unchanged', before: k.before, after: k.before, reason: k.reason })),
  ];
  return secrets ? out.map((c) => maskDeep(c, secrets)) : out;
}

function maskDeep<T>(v: T, s: SecretSet): T {
  if (typeof v === 'string') return s.mask(v) as T;
  if (Array.isArray(v)) return v.map((x) => maskDeep(x, s)) as T;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, maskDeep(x, s)])) as T;
  return v;
}
