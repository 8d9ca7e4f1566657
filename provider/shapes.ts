// Each resource's properties, written once: the class's constructor registers `outputs` (and checks by
// `implements OutputsOf` that it declares them), the runtime returns exactly them (`Outs`), the dispatcher
// compares `inputs`, and `secrets` come from the model's secret flags: a property that carries a model's
// record holding a secret (an install profile's passwords, an account's password), a record's own secret
// fields, and `connection` always. Plain data: the runtime and the classes both load it.
import { holdsSecret, secretsOf } from '../src/model/redact';
import { credAccount, installProfile, OPENSTACK_ACCOUNT_FIELDS, openStackAccountFields } from '../src/model/resources';
import type { AnyModel, Fields } from '../src/model/schema';

/** Inputs every resource takes: where to connect (credentials: always a secret) and whether to adopt. */
const COMMON_INPUTS = ['connection', 'adopt'] as const;

interface ShapeSpec {
  /** The type token's last part: `pulumi-nodejs:dynamic/appliance-forge:<type>`. */
  readonly type: string;
  /** Input properties, in the order they are compared (the common ones are added). */
  readonly inputs: readonly string[];
  /** Properties the service gives back, beside the inputs. */
  readonly outputs: readonly string[];
  /** Input properties that carry a record of a model (their secrecy follows the model's flags). */
  readonly records?: Readonly<Record<string, AnyModel>>;
  /** The model fields the resource's own properties are (their secret flags apply one by one). */
  readonly fields?: Fields;
}

function shape<const S extends ShapeSpec>(s: S) {
  const records = Object.entries(s.records ?? {}).filter(([, m]) => holdsSecret(m)).map(([name]) => name);
  return {
    ...s,
    inputs: [...s.inputs, ...COMMON_INPUTS] as const,
    secrets: [...(s.fields ? secretsOf(s.fields) : []), ...records, 'connection'],
  };
}

export const shapes = {
  software: shape({ type: 'Software', inputs: ['name', 'version', 'description', 'files'], outputs: ['uri', 'artifactUris'] }),
  appliance: shape({
    type: 'Appliance',
    inputs: ['name', 'version', 'description', 'distribution', 'osProfile', 'packages', 'software', 'installation', 'org'],
    outputs: ['uri', 'revision', 'distributionUri', 'osProfileUri', 'packageUris'],
    records: { installation: installProfile },
  }),
  machineImage: shape({
    type: 'MachineImage',
    inputs: ['appliance', 'applianceRevision', 'format', 'compress', 'memorySize', 'diskSize', 'timeout'],
    outputs: ['uri', 'sha256', 'fileSize', 'downloadUri', 'fileName', 'sbomUris', 'downloadUrl', 'sbomUrls'],
  }),
  publication: shape({
    type: 'Publication',
    inputs: ['image', 'appliance', 'account', 'keystoneDomain', 'keystoneProject', 'displayName', 'publicImage', 'timeout'],
    outputs: ['uri', 'cloudId'],
    records: { account: credAccount },
  }),
  cloudAccount: shape({
    type: 'CloudAccount',
    inputs: ['name', ...OPENSTACK_ACCOUNT_FIELDS],
    outputs: ['uri'],
    fields: openStackAccountFields,
  }),
} as const;

export type ResourceKind = keyof typeof shapes;
export type OutputName<K extends ResourceKind> = (typeof shapes)[K]['outputs'][number];
/** What the runtime gives back for a resource: every output, by name (the compiler checks none is missed). */
export type Outs<K extends ResourceKind> = Record<OutputName<K>, unknown>;
