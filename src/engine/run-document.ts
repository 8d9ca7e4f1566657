// The one document of a plan or an apply that every front end prints: `appliance-forge plan|apply --json`
// and the Action's `result` output. `ok`, the target, the counts, `changes` (one object
// per planned item, engine/changes.ts) and `images` (one entry per builder, with the files and SBOMs
// written beside them). Values not known in a mode are null.
import type { ImageResult } from './apply';
import { planChanges, type PlanChange } from './changes';
import type { BuilderDecl } from './declaration';
import type { SavedImage } from './output';
import type { Plan } from './plan';
import { planSummary } from './report';
import type { SecretSet } from './secrets';

export interface RunImage {
  /** Index of the builder in the declaration (`builders[i]`). */
  builder: number;
  format: string;
  /** `generate`: a new image is (or would be) built; `reuse`: the image of this revision exists. */
  action: 'generate' | 'reuse';
  imageUri: string | null;
  sha256: string | null;
  size: number | null;
  reused: boolean;
  displayName: string | null;
  cloudId: string | null;
  publicationReused: boolean | null;
  /** Path of the downloaded image file (apply with an output folder). */
  file: string | null;
  /** Paths of the SBOMs saved beside that file, by format (`cyclonedx`, `spdx`); empty when none. */
  sboms: SavedImage['sboms'];
}

export interface RunDocument {
  ok: true;
  mode: 'plan' | 'apply';
  /** What the run was against: the service's URL without user or password, or `embedded`. */
  target: string;
  applianceUri: string | null;
  /** The counts; `summary.changes`: plan, an apply would change the service; apply, this run changed it. */
  summary: ReturnType<typeof planSummary>;
  /** One object per planned item, no-ops included: {kind, name, action, before, after, reason?}. */
  changes: PlanChange[];
  images: RunImage[];
}

function document(mode: RunDocument['mode'], target: string, plan: Plan, applianceUri: string | null, images: RunImage[], secrets: SecretSet): RunDocument {
  return { ok: true, mode, target, applianceUri, summary: planSummary(plan), changes: planChanges(plan, secrets), images };
}

/** What an apply would do, per builder. */
export function planDocument(target: string, plan: Plan, builders: readonly BuilderDecl[], secrets: SecretSet): RunDocument {
  const images = builders.map((b): RunImage => {
    const img = plan.images.find((i) => i.builders.includes(b.index));
    const reused = img?.action === 'reuse' ? img : undefined;
    const pub = plan.publications.find((p) => p.builder === b.index);
    return {
      builder: b.index, format: b.type, action: img?.action ?? 'generate', imageUri: reused?.uri ?? null,
      sha256: reused?.image.sha256sum ?? null, size: reused ? (reused.image.fileSize ?? reused.image.size ?? null) : null,
      reused: reused !== undefined,
      displayName: pub?.displayName ?? null, cloudId: pub?.action === 'reuse' ? (pub.publication.cloudId ?? null) : null,
      publicationReused: pub ? pub.action === 'reuse' : null,
      file: null, sboms: {},
    };
  });
  return document('plan', target, plan, plan.appliance.action === 'create' ? null : plan.appliance.uri, images, secrets);
}

/** What an apply did, per builder; `files`: the images saved (and their SBOMs), if any. */
export function applyDocument(
  target: string, plan: Plan, applianceUri: string, results: readonly ImageResult[], files: readonly SavedImage[], secrets: SecretSet,
): RunDocument {
  const images = results.map((i): RunImage => {
    const saved = files.find((f) => f.imageUri === i.imageUri);
    return {
      builder: i.builder, format: i.format, action: i.reused ? 'reuse' : 'generate', imageUri: i.imageUri,
      sha256: i.sha256 ?? null, size: i.size ?? null, reused: i.reused,
      displayName: i.publication?.displayName ?? null, cloudId: i.publication?.cloudId ?? null,
      publicationReused: i.publication ? i.publication.reused : null,
      file: saved?.path ?? null, sboms: saved?.sboms ?? {},
    };
  });
  return document('apply', target, plan, applianceUri, images, secrets);
}
