// Appliances (templates): the list, and one template with its OS (distribution, profile, packages), its
// software and its images.
import type { Appliance, DistribProfile, Image, Pkg } from '../../../model/resources';
import type { Located } from '../../views/stamp';
import { html, type Html } from '../html';
import { BASE, page, stateWords } from '../layout';
import type { Session } from '../session';
import { imagePath } from './images';

export const idOf = (uri: string | undefined): string => /(\d+)$/.exec(uri ?? '')?.[1] ?? '';

export function applianceListPage(session: Session, all: ReadonlyArray<Located<Appliance>>): Html {
  const body = all.length
    ? html`<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Version</th><th scope="col">Distribution</th><th scope="col">Software</th><th scope="col" class="num">Images</th></tr></thead>
<tbody>${all.map(
        (a) => html`<tr><td data-label="Name"><a href="${BASE}/appliances/${a.dbId}">${a.name}</a></td><td data-label="Version">${a.version}</td><td data-label="Distribution">${a.distributionName} ${a.archName}</td>
<td data-label="Software">${(a.mySoftwareList ?? []).map((s) => s.name).join(', ')}</td><td data-label="Images" class="num">${a.imageUris?.length ?? 0}</td></tr>`,
      )}</tbody></table>`
    : html`<p>No appliances yet. Declare one and run <code>appliance-forge apply</code>, or create one with the API.</p>`;
  return page({ title: 'Appliances', session, current: 'appliances', body });
}

export interface ApplianceDetail {
  appliance: Located<Appliance>;
  profile: Located<DistribProfile> | undefined;
  packages: readonly Pkg[];
  images: ReadonlyArray<Located<Image>>;
}

export function appliancePage(session: Session, d: ApplianceDetail): Html {
  const a = d.appliance;
  const software = a.mySoftwareList ?? [];
  const body = html`<dl>
<dt>Name</dt><dd>${a.name}</dd>
<dt>Version</dt><dd>${a.version}</dd>
<dt>Description</dt><dd>${a.description}</dd>
<dt>Operating system</dt><dd>${a.distributionName} ${a.archName}</dd>
<dt>OS profile</dt><dd>${d.profile ? `${d.profile.name ?? ''} (${d.profile.kind ?? ''})` : 'none yet'}</dd>
<dt>Revision</dt><dd>${a.revision}</dd>
<dt>UUID</dt><dd><code>${a.uuid}</code></dd>
</dl>
${session.readOnly ? '' : html`<p><a class="button quiet" href="${BASE}/appliances/${a.dbId}/delete">Delete the appliance</a></p>`}
<h2>Images</h2>
${d.images.length
  ? html`<table class="stack"><thead><tr><th scope="col">Image</th><th scope="col">Format</th><th scope="col">Status</th></tr></thead>
<tbody>${[...d.images].sort((x, y) => (y.dbId ?? 0) - (x.dbId ?? 0)).map((i) => html`<tr><td data-label="Image"><a href="${imagePath(i)}">Image ${i.dbId}</a></td><td data-label="Format">${i.targetFormat?.name}</td><td data-label="Status">${stateWords(i.status ?? {})}</td></tr>`)}</tbody></table>`
  : html`<p>No images of this appliance.</p>`}
<h2>Software</h2>
${software.length
  ? html`<ul>${software.map((s) => html`<li><a href="${BASE}/software/${idOf(s.uri)}">${s.name} ${s.version}</a></li>`)}</ul>`
  : html`<p>No software bundles.</p>`}
<h2>Packages (${d.packages.length})</h2>
${d.packages.length
  ? html`<table class="stack"><thead><tr><th scope="col">Package</th><th scope="col">Version</th><th scope="col">Architecture</th></tr></thead>
<tbody>${d.packages.map((p) => html`<tr><td data-label="Package">${p.name}</td><td data-label="Version">${p.version}${p.release ? `-${p.release}` : ''}</td><td data-label="Architecture">${p.arch}</td></tr>`)}</tbody></table>`
  : html`<p>No packages beyond the profile's base.</p>`}`;
  return page({ title: `Appliance ${a.name ?? ''} ${a.version ?? ''}`, session, current: 'appliances', body });
}

