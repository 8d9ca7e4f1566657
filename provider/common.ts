// What every resource class shares: the optional per-resource `connection`, `adopt`, and the rule that a
// credential is a secret both in the inputs and in the outputs that Pulumi stores (the dynamic-provider host
// drops the secret bit, so the class marks those outputs with `additionalSecretOutputs`).
import * as pulumi from '@pulumi/pulumi';

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

/** Wraps the inputs that hold credentials in `pulumi.secret` and marks the same outputs secret. */
export function secretInputs<T extends Record<string, unknown>>(
  props: T,
  secretKeys: readonly (keyof T & string)[],
  opts: pulumi.CustomResourceOptions | undefined,
): [T, pulumi.CustomResourceOptions] {
  const out: Record<string, unknown> = { ...props };
  for (const k of secretKeys) if (out[k] !== undefined) out[k] = pulumi.secret(out[k]);
  const additionalSecretOutputs = [...new Set([...(opts?.additionalSecretOutputs ?? []), ...secretKeys])];
  return [out as T, { ...opts, additionalSecretOutputs }];
}
