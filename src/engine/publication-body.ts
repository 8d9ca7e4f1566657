// The publishImage body of an OpenStack publication and its account (wire contract §9), one recipe for
// the engine and the provider: the same declaration gives the same request whichever tool sends it.
import type { CredAccount, PublishImage } from '../model/resources';

export interface OpenStackAccountInput {
  /** The account's name (a stored account has one; an embedded one may not). */
  readonly name?: string | undefined;
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

/** The credAccount of an OpenStack account, stored (cloudAccount_create) or embedded in a publication. */
export function openStackAccountBody(a: OpenStackAccountInput): CredAccount {
  return {
    kind: 'CredAccountOpenStack',
    ...(a.uri ? { uri: a.uri } : {}),
    ...(a.name !== undefined ? { name: a.name } : {}),
    targetPlatform: { name: 'OpenStack', type: 'openstack' },
    keystoneUrl: a.keystoneUrl,
    ...(a.glanceUrl ? { glanceUrl: a.glanceUrl } : {}),
    login: a.login,
    ...(a.password !== undefined ? { password: a.password } : {}),
    keystoneVersion: a.keystoneVersion ?? 'v3',
  };
}

export function publishImageBody(p: PublicationInput): PublishImage {
  const { name: _name, ...account } = p.account;
  return {
    kind: 'PublishImageOpenStack',
    imageUri: p.imageUri,
    credAccount: openStackAccountBody(account),
    keystoneDomain: p.keystoneDomain,
    keystoneProject: p.keystoneProject,
    displayName: p.displayName,
    publicImage: p.publicImage,
  };
}
