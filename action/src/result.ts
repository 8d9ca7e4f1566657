// The `result` output: one shape in plan and apply modes, one entry per builder the step ran, keyed
// by the builder's index in the declaration so that the results of a matrix's jobs merge by
// concatenating their `images` (README "GitHub Action"). Values not known in a mode are null.
// `plan` is the structured list of changes of `appliance-forge plan --json` (engine/changes.ts).
import {
  type BuilderDecl, type ImageResult, type Plan, planChanges, type PlanChange, planSummary, type SavedImage, type SecretSet, type ValidationReport,
} from '../../src/engine';

export interface ResultEntry {
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
  /** Path of the downloaded image file (apply with `output-dir`). */
  file: string | null;
}

export interface ActionResult {
  mode: 'plan' | 'apply';
  /** What the step ran against: the service's URL without user or password, or `embedded`. */
  target: string;
  /** plan: an apply would change the service; apply: this run changed it. */
  changes: boolean;
  applianceUri: string | null;
  summary: ReturnType<typeof planSummary>;
  /** One object per planned item, no-ops included: {kind, name, action, before, after, reason?}, as `plan --json`'s `changes`. */
  plan: PlanChange[];
  images: ResultEntry[];
}

/** `mode: validate`: the report of `appliance-forge validate --json`, with the mode. */
export type ValidateResult = { mode: 'validate' } & ValidationReport;

function base(mode: ActionResult['mode'], target: string, plan: Plan, applianceUri: string | null, images: ResultEntry[], secrets: SecretSet): ActionResult {
  return { mode, target, changes: plan.hasChanges, applianceUri, summary: planSummary(plan), plan: planChanges(plan, secrets), images };
}

/** What an apply would do, per builder. */
export function planResult(target: string, plan: Plan, builders: readonly BuilderDecl[], secrets: SecretSet): ActionResult {
  const images = builders.map((b): ResultEntry => {
    const img = plan.images.find((i) => i.builders.includes(b.index));
    const reused = img?.action === 'reuse' ? img : undefined;
    const pub = plan.publications.find((p) => p.builder === b.index);
    return {
      builder: b.index, format: b.type, action: img?.action ?? 'generate', imageUri: reused?.uri ?? null,
      sha256: reused?.image.sha256sum ?? null, size: reused ? (reused.image.fileSize ?? reused.image.size ?? null) : null,
      reused: reused !== undefined,
      displayName: pub?.displayName ?? null, cloudId: pub?.action === 'reuse' ? (pub.publication.cloudId ?? null) : null,
      publicationReused: pub ? pub.action === 'reuse' : null,
      file: null,
    };
  });
  return base('plan', target, plan, plan.appliance.action === 'create' ? null : plan.appliance.uri, images, secrets);
}

/** What an apply did, per builder. */
export function applyResult(target: string, plan: Plan, applianceUri: string, results: readonly ImageResult[], files: readonly SavedImage[], secrets: SecretSet): ActionResult {
  const images = results.map((i): ResultEntry => ({
    builder: i.builder, format: i.format, action: i.reused ? 'reuse' : 'generate', imageUri: i.imageUri,
    sha256: i.sha256 ?? null, size: i.size ?? null, reused: i.reused,
    displayName: i.publication?.displayName ?? null, cloudId: i.publication?.cloudId ?? null,
    publicationReused: i.publication ? i.publication.reused : null,
    file: files.find((f) => f.imageUri === i.imageUri)?.path ?? null,
  }));
  return base('apply', target, plan, applianceUri, images, secrets);
}
