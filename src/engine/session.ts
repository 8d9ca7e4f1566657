// One run of a declaration, the sequence the command line and the GitHub Action share: read the file,
// select its builders, connect, then plan, apply (and download the images) or destroy. The adapters
// say how each step shows through hooks; a failure comes back described (failure.ts), masked with
// every secret the run learned, so that each adapter only prints it its own way.
import { selectBuilders } from './builder-selection';
import { connect, type ConnectSettings, type Connection } from './connect';
import type { BuilderDecl, Declaration } from './declaration';
import type { DestroyPlan } from './destroy';
import type { EventSink } from './events';
import { describeFailure, type Deadline, type Failure } from './failure';
import { applyDeclaration, destroyPlanned, type EngineOptions, type Loaded, loadDeclaration, planDeclaration, planDestroy } from './index';
import type { ApplyResult } from './apply';
import { saveImages, type SavedImage } from './output';
import type { ParseOptions } from './parse';
import { type Plan, preparePasswords } from './plan';
import type { Removed } from './remove';
import type { SecretSet } from './secrets';

export type SessionMode = 'plan' | 'apply' | 'destroy';

export interface SessionRequest {
  readonly mode: SessionMode;
  readonly file: string;
  /** How the file is read; destroy reads no publication (nor the variables it names), whatever `publish` says. */
  readonly load: Pick<ParseOptions, 'env' | 'vars' | 'allowOutsideSources' | 'publish'>;
  /** The builders to run (builder-selection.ts); no selector: all of them. */
  readonly builders: { readonly selectors: readonly string[]; readonly label: string; readonly except?: boolean };
  readonly connection: ConnectSettings;
  /** Every secret the run learns joins this set. */
  readonly secrets: SecretSet;
  /** Interruption (SIGINT, a cancelled workflow): the running jobs are cancelled. */
  readonly signal: AbortSignal;
  /** Bounds the whole run as an interruption does; `bound` names it in the failure (`30m (--timeout)`). */
  readonly timeout?: { readonly ms: number; readonly bound: string } | undefined;
  readonly prune?: boolean | undefined;
  /** apply: download every image into this folder (sha256 checked). */
  readonly outputDir?: string | undefined;
}

/** How the run shows, each called once at its step. */
export interface SessionHooks {
  readonly onEvent: EventSink;
  /** A secret the run learned (declared, or the connection's), before anything could show it. */
  readonly onSecret?: (value: string) => void;
  /** The declaration is read; its warnings (errors throw). */
  readonly loaded?: (loaded: Loaded) => void;
  /** The builders this run makes; a selection keeps their indexes in the declaration. */
  readonly selected?: (builders: readonly BuilderDecl[], all: readonly BuilderDecl[]) => void;
  readonly connected?: (conn: Connection) => void;
  /** destroy: whether to remove what the plan lists; false removes nothing. */
  readonly approve?: (plan: DestroyPlan, conn: Connection) => Promise<boolean>;
}

export type SessionOutcome = { readonly declaration: Declaration } & (
  | { readonly mode: 'plan'; readonly plan: Plan }
  | { readonly mode: 'apply'; readonly result: ApplyResult & { plan: Plan }; readonly files?: readonly SavedImage[] | undefined }
  /** `removed` is absent when nothing was removed (nothing to remove, or not approved). */
  | { readonly mode: 'destroy'; readonly plan: DestroyPlan; readonly removed?: readonly Removed[] | undefined }
);

export type SessionResult = ({ readonly ok: true } & SessionOutcome) | { readonly ok: false; readonly failure: Failure; readonly error: unknown };

export async function runDeclaration(req: SessionRequest, hooks: SessionHooks): Promise<SessionResult> {
  const { secrets } = req;
  const deadline: Deadline | undefined = req.timeout && {
    signal: AbortSignal.any([req.signal, AbortSignal.timeout(req.timeout.ms)]), bound: req.timeout.bound,
  };
  let conn: Connection | undefined;
  try {
    const loaded = loadDeclaration(req.file, { ...req.load, publish: req.mode !== 'destroy' && req.load.publish !== false });
    for (const s of loaded.declaration.secrets) hooks.onSecret?.(s);
    secrets.addAll(loaded.declaration.secrets);
    hooks.loaded?.(loaded);
    const all = loaded.declaration.builders;
    // A selector that matches nothing fails before any server starts.
    const declaration = { ...loaded.declaration, builders: selectBuilders(all, req.builders.selectors, req.builders) };
    hooks.selected?.(declaration.builders, all);
    // The passwords' fingerprint (deliberately slow) is made on another thread while the server starts.
    if (req.mode !== 'destroy') void preparePasswords(declaration.stack);
    conn = await connect(req.connection);
    for (const s of conn.secrets.list()) if (!secrets.list().includes(s)) hooks.onSecret?.(s);
    secrets.addAll(conn.secrets.list());
    hooks.connected?.(conn);
    const o: EngineOptions = {
      client: conn.client, secrets, signal: deadline?.signal ?? req.signal, publish: req.load.publish !== false, prune: req.prune === true,
      onEvent: hooks.onEvent,
      // A job wait gives up no sooner than the run's bound.
      jobTimeoutMs: req.timeout?.ms,
    };
    const outcome = await carryOut(req, hooks, declaration, conn, o);
    const closing = conn;
    conn = undefined;
    await closing.close();
    return { ok: true, ...outcome };
  } catch (error) {
    // The run's own failure is the one to tell; closing after it is best effort.
    await conn?.close().catch(() => undefined);
    return { ok: false, failure: describeFailure(error, secrets, deadline, req.connection), error };
  }
}

async function carryOut(req: SessionRequest, hooks: SessionHooks, declaration: Declaration, conn: Connection, o: EngineOptions): Promise<SessionOutcome> {
  if (req.mode === 'plan') return { mode: 'plan', declaration, plan: (await planDeclaration(declaration, o)).plan };
  if (req.mode === 'apply') {
    const result = await applyDeclaration(declaration, o);
    const files = req.outputDir === undefined ? undefined : await saveImages(conn.client, result.images, req.outputDir, o);
    return { mode: 'apply', declaration, result, files };
  }
  const plan = await planDestroy(declaration, o);
  const removed = (await hooks.approve?.(plan, conn)) ? await destroyPlanned(declaration, plan, o) : undefined;
  return { mode: 'destroy', declaration, plan, removed };
}
