// The Action's inputs (action.yml), read and checked once: credentials are masked before anything else
// is read; a boolean or a mode outside its words fails the step naming the input.
import * as core from '@actions/core';
import { collectVars, type SecretSet } from '../../src/engine';
import { chooseTarget, EMBEDDED } from '../../src/engine/connect';
import type { Vars } from '../../src/engine/env-refs';

export interface Inputs {
  file: string;
  /** The service's base URL, or `embedded`. */
  url: string;
  user: string;
  apiKey: string;
  secretKey: string;
  password: string;
  mode: 'apply' | 'plan' | 'validate';
  /** validate: unknown fields are errors. */
  strict: boolean;
  publish: boolean;
  /** apply: remove superseded images and their publications after a successful apply. */
  prune: boolean;
  timeoutMinutes: number;
  /** Where apply downloads the built images (sha256 checked); empty: no download. */
  outputDir: string;
  /** url embedded: OS layer archives kept between runs (APPLIANCE_FORGE_LAYER_ARCHIVE_DIR); empty: none. */
  layerArchiveDir: string;
  /** Builder types or indexes this step runs (builders.ts); empty: all. */
  builders: string;
  /** Bundle sources may lie outside the declaration's folder (engine/bundle-source.ts). */
  allowOutsideSources: boolean;
  /** `${var:NAME}` values: the var-files input, then the vars input (engine/vars.ts). */
  vars: Vars;
}

/** An input's non-blank lines, trimmed. */
const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/** The inputs that name a user or a credential: with one of them, an empty url names them. */
const CREDENTIAL_INPUTS = ['user', 'api-key', 'secret-key', 'password'] as const;

/**
 * A boolean input as `core.getBooleanInput` reads it (YAML 1.2 core schema: true, True, TRUE, false,
 * False, FALSE); anything else fails the step naming the input. Empty: `fallback`, action.yml's default.
 */
function booleanInput(name: string, fallback: boolean): boolean {
  const text = core.getInput(name);
  if (text === '') return fallback;
  try {
    return core.getBooleanInput(name);
  } catch {
    throw new Error(`input ${name} must be true or false (YAML 1.2: true, True, TRUE, false, False or FALSE), not ${JSON.stringify(text.slice(0, 40))}`);
  }
}

export function readInputs(secrets: SecretSet): Inputs {
  // Credentials are masked first, before a line could show them.
  const secretKey = core.getInput('secret-key');
  const password = core.getInput('password');
  for (const s of [secretKey, password]) if (s) core.setSecret(s);
  secrets.add(secretKey);
  secrets.add(password);
  const mode = core.getInput('mode') || 'apply';
  if (mode !== 'apply' && mode !== 'plan' && mode !== 'validate') throw new Error(`input mode must be apply, plan or validate, not ${JSON.stringify(mode)}`);
  const minutes = Number(core.getInput('timeout-minutes') || '60');
  if (!Number.isFinite(minutes) || minutes <= 0) throw new Error('input timeout-minutes must be a positive number');
  // An unset variable or secret gives an empty url: that must not quietly become a local build.
  // validate is offline: it needs none.
  const url = core.getInput('url');
  if (!url && mode !== 'validate') {
    // With a credential the error names it, as the command line's does; without, it is an error all the same.
    const given = CREDENTIAL_INPUTS.filter((i) => core.getInput(i) !== '').map((i) => `input ${i}`);
    chooseTarget(url, given, { url: "input url (the service's URL)", embedded: `url: ${EMBEDDED}` });
    throw new Error(`input url is empty: give the service's URL, or ${EMBEDDED} to build with the embedded reference server inside this step`);
  }
  return {
    file: core.getInput('file', { required: true }),
    url,
    user: core.getInput('user'),
    apiKey: core.getInput('api-key'),
    secretKey,
    password,
    mode,
    publish: booleanInput('publish', true),
    prune: booleanInput('prune', false),
    strict: booleanInput('strict', false),
    timeoutMinutes: minutes,
    outputDir: core.getInput('output-dir'),
    layerArchiveDir: core.getInput('layer-archive-dir'),
    builders: core.getInput('builders'),
    allowOutsideSources: booleanInput('allow-outside-sources', false),
    vars: collectVars({ files: lines(core.getInput('var-files')), assignments: lines(core.getInput('vars')) }, { assignment: 'input vars:', file: 'input var-files:' }),
  };
}
