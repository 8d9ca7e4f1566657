// Resolves the names of a declaration against the service's catalog: distribution by name,
// version and arch, base profile by name, packages by FIQL search, target formats by display name,
// accounts by name. Every name that resolves to nothing is a problem at its line, all reported at once.
import type { Client } from '../client';
import { fiql } from '../fiql/builder';
import type { TargetFormat } from '../model/resources';
import { type Declaration, type PackageDecl, isAccountRef } from './declaration';
import { findPackage, wantedLabel } from './package-choice';
import { idOf, urisOf } from './plan';
import { ProblemList } from './problems';
import type { Resolved, ResolvedAccount, ResolvedPackage } from './state';
import { unknownFormat } from './vocabularies';

/** Package searches under way at once: enough to hide latency, few enough to be polite. */
const PACKAGE_LOOKUPS = 8;

export async function resolveDeclaration(client: Client, decl: Declaration, signal?: AbortSignal): Promise<Resolved> {
  const problems = new ProblemList(decl.file);
  const { os } = decl.stack;
  const label = `${os.name} ${os.version} ${os.arch}`;

  const [dists, formatList, accountList] = await Promise.all([
    client.os_getAll({ params: { query: fiql.and(fiql.eq('name', os.name), fiql.eq('version', os.version), fiql.eq('arch', os.arch)) }, signal }),
    client.userTargetFormat_getAll({ signal }),
    decl.builders.some((b) => b.publication && isAccountRef(b.publication.account))
      ? client.cloudAccount_getAll({ signal })
      : Promise.resolve(undefined),
  ]);

  // ---- Target formats and accounts (independent of the distribution)
  const byName = new Map((formatList.targetFormats ?? []).map((f) => [f.name ?? '', f]));
  const formats = new Map<number, TargetFormat>();
  const accounts = new Map<number, ResolvedAccount>();
  for (const b of decl.builders) {
    const f = byName.get(b.type);
    if (!f) {
      problems.add(b.typeAt, unknownFormat(b.type, [...byName.keys()])!);
      continue;
    }
    formats.set(b.index, f);
    const pub = b.publication;
    if (!pub) continue;
    if (!f.credAccountType) {
      problems.add(pub.at, `format "${b.type}" cannot be published; use a cloud format such as "OpenStack ${b.type}"`);
      continue;
    }
    if (!isAccountRef(pub.account)) {
      const a = pub.account;
      accounts.set(b.index, { name: a.name, keystoneUrl: a.keystoneUrl, glanceUrl: a.glanceUrl, login: a.login, password: a.password, decl: a });
      continue;
    }
    const ref = pub.account.ref;
    const found = (accountList?.credAccounts ?? []).find((a) => a.name === ref);
    if (!found || !found.keystoneUrl || !found.login) {
      problems.add(pub.account.at, `no account named "${ref}" in the declaration's accounts nor on the service`);
      continue;
    }
    accounts.set(b.index, { name: ref, keystoneUrl: found.keystoneUrl, glanceUrl: found.glanceUrl, login: found.login, uri: found.uri });
  }

  // ---- Distribution, base profile and packages
  const distUri = (dists.distributions ?? [])[0]?.uri;
  if (!distUri) {
    problems.add(os.at, `no distribution ${label} on the service`);
    return problems.throwErrors();
  }
  const distId = idOf(distUri);
  const profiles = await client.osTemplate_getAll({ id: distId, params: { query: fiql.eq('name', os.profile) }, signal });
  const profile = (profiles.distribProfiles ?? []).find((p) => p.name === os.profile);
  const [basePkgs, packages] = await Promise.all([
    profile?.uri ? client.osTemplatePkgs_get({ id: distId, prid: idOf(profile.uri), signal }) : Promise.resolve(undefined),
    resolvePackages(client, distId, decl.stack.packages, problems, label, signal),
  ]);
  if (!profile?.uri) {
    problems.add(os.profileAt, `no base profile "${os.profile}" for ${label}`);
    return problems.throwErrors();
  }
  problems.throwIfErrors();

  return {
    distribution: { uri: distUri, id: distId, label },
    profile: { uri: profile.uri, name: os.profile, pkgUris: new Set(urisOf(basePkgs?.pkgs)) },
    packages,
    formats,
    accounts,
  };
}

async function resolvePackages(
  client: Client, distId: string, decls: readonly PackageDecl[], problems: ProblemList, label: string, signal?: AbortSignal,
): Promise<ResolvedPackage[]> {
  const out: Array<ResolvedPackage | undefined> = new Array(decls.length);
  let next = 0;
  const worker = async () => {
    while (next < decls.length) {
      const i = next++;
      const d = decls[i]!;
      const pick = await findPackage(client, distId, d, signal);
      if (!pick?.uri) {
        problems.add(d.at, `package "${wantedLabel(d)}" not found in ${label}`);
        continue;
      }
      out[i] = { decl: d, uri: pick.uri, label: [pick.name, pick.version, pick.arch].filter(Boolean).join(' ') };
    }
  };
  await Promise.all(Array.from({ length: Math.min(PACKAGE_LOOKUPS, decls.length) }, worker));
  return out.filter((p): p is ResolvedPackage => p !== undefined);
}
