// What every resource class shares: the optional per-resource `connection`, `adopt`, and the rule that a
// credential is a secret both in the inputs and in the outputs that Pulumi stores (the dynamic-provider host
// drops the secret bit, so the class marks those outputs with `additionalSecretOutputs`); which properties
// those are is in shapes.ts, from the model's secret flags.
import * as pulumi from '@pulumi/pulumi';
import { shapes, type OutputName, type ResourceKind } from './shapes';

/** A service endpoint and the credentials for it; overrides the `appliance-forge:*` configuration. */
export interface ConnectionArgs {
  /** Base URL with the service path, e.g. `https://forge.example.com/api`. */
  url: pulumi.Input<string>;
  user: pulumi.Input<string>;
  apiKey?: pulumi.Input<string>;
  secretKey?: pulumi.Input<string>;
  password?: pulumi.Input<string>;
}

export interface CommonArgs {
  /** Talk to this endpoint instead of the one in the stack configuration. Stored as a secret. */
  connection?: pulumi.Input<ConnectionArgs>;
  /** Take over an existing object of the same name instead of failing with "already exists" (409). */
  adopt?: pulumi.Input<boolean>;
}

/** A plain record's fields as a resource's arguments: each may be an Output; optional stays optional, docs stay. */
export type PulumiInputs<T> = { -readonly [K in keyof T]: pulumi.Input<NonNullable<T[K]>> };

/** Type token module: resources appear as `pulumi-nodejs:dynamic/appliance-forge:<Type>`. */
export const TYPE_MODULE = 'appliance-forge';

export type OutputsOf<K extends ResourceKind> = { readonly [P in OutputName<K>]: pulumi.Output<unknown> };

/**
 * What a class registers: its inputs, its outputs unset (so that Pulumi reports them back), the secret
 * ones (shapes.ts) wrapped in `pulumi.secret` and marked with `additionalSecretOutputs`.
 */
export function registration<K extends ResourceKind>(
  kind: K,
  args: object,
  opts: pulumi.CustomResourceOptions | undefined,
): [Record<string, unknown>, pulumi.CustomResourceOptions] {
  const s = shapes[kind];
  const props: Record<string, unknown> = { ...args };
  for (const k of s.outputs) props[k] = undefined;
  for (const k of s.secrets) if (props[k] !== undefined) props[k] = pulumi.secret(props[k]);
  const additionalSecretOutputs = [...new Set([...(opts?.additionalSecretOutputs ?? []), ...s.secrets])];
  return [props, { ...opts, additionalSecretOutputs }];
}
