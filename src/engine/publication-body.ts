// The publishImage body of an OpenStack publication (wire contract §9), one recipe for the engine and
// the provider: the same declaration gives the same request whichever tool sends it.
import type { PublishImage } from '../model/resources';

export interface OpenStackAccountInput {
  /** A stored account's URI: the service then takes its fields and sealed password as the base. */
  readonly uri?: string | undefined;
  readonly keystoneUrl: string;
  readonly glanceUrl?: string | undefined;
  readonly login: string;
  /** Left out to use a stored account's own password. */
  readonly password?: string | undefined;
  /** Identity v3 is the one supported; the default. */
  readonly keystoneVersion?: string | undefined;
}

export interface PublicationInput {
  readonly imageUri: string;
  readonly account: OpenStackAccountInput;
  readonly keystoneDomain: string;
  readonly keystoneProject: string;
  readonly displayName: string;
  readonly publicImage: boolean;
}

export function publishImageBody(p: PublicationInput): PublishImage {
  const a = p.account;
  return {
    kind: 'PublishImageOpenStack',
    imageUri: p.imageUri,
    credAccount: {
      kind: 'CredAccountOpenStack',
      ...(a.uri ? { uri: a.uri } : {}),
      targetPlatform: { name: 'OpenStack' },
      keystoneUrl: a.keystoneUrl,
      ...(a.glanceUrl ? { glanceUrl: a.glanceUrl } : {}),
      login: a.login,
      ...(a.password !== undefined ? { password: a.password } : {}),
      keystoneVersion: a.keystoneVersion ?? 'v3',
    },
    keystoneDomain: p.keystoneDomain,
    keystoneProject: p.keystoneProject,
    displayName: p.displayName,
    publicImage: p.publicImage,
  };
}
