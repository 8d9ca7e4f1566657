// Software bundles (My Software) and their files.
import type { MySoftware, SoftwareArtifact } from '../../../model/resources';
import type { Located } from '../../views/stamp';
import { html, type Html } from '../html';
import { BASE, bytes, page } from '../layout';
import type { Session } from '../session';

export function softwareListPage(session: Session, all: ReadonlyArray<Located<MySoftware>>): Html {
  const body = all.length
    ? html`<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Version</th><th scope="col">Description</th><th scope="col" class="num">Size</th></tr></thead>
<tbody>${all.map((s) => html`<tr><td data-label="Name"><a href="${BASE}/software/${s.dbId}">${s.name}</a></td><td data-label="Version">${s.version}</td><td data-label="Description">${s.description}</td><td data-label="Size" class="num">${bytes(s.size)}</td></tr>`)}</tbody></table>`
    : html`<p>No software bundles yet.</p>`;
  return page({ title: 'Software', session, current: 'software', body });
}

export function softwarePage(session: Session, s: Located<MySoftware>, files: ReadonlyArray<Located<SoftwareArtifact>>): Html {
  const body = html`<dl>
<dt>Name</dt><dd>${s.name}</dd>
<dt>Version</dt><dd>${s.version}</dd>
<dt>Description</dt><dd>${s.description}</dd>
<dt>Used by</dt><dd>${s.applianceUris?.length ?? 0} appliances</dd>
</dl>
<h2>Files (${files.length})</h2>
${files.length
  ? html`<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Install location</th><th scope="col" class="num">Size</th><th scope="col">SHA-256</th></tr></thead>
<tbody>${files.map((f) => html`<tr><td data-label="Name">${f.fullName ?? f.name ?? f.origName}</td><td data-label="Install location">${f.installLocation}</td><td data-label="Size" class="num">${bytes(f.size)}</td><td data-label="SHA-256"><code>${f.sha256sum ?? 'not uploaded yet'}</code></td></tr>`)}</tbody></table>`
  : html`<p>No files.</p>`}`;
  return page({ title: `Software ${s.name ?? ''} ${s.version ?? ''}`, session, current: 'software', body });
}
