// Images and their builds: the list (every image of the user, newest first, a page at a time) and one
// image (format, size, sha256, download, publications in Glance, the SBOM's package table and licenses).
import type { Image, PublishImage } from '../../../model/resources';
import { jobState } from '../../../model/job-state';
import type { Located } from '../../views/stamp';
import { html, type Html } from '../html';
import { BASE, bytes, duration, page, stateWords } from '../layout';
import { searchPackages, type SbomTable } from '../sbom';
import type { Session } from '../session';

export const IMAGES_PER_PAGE = 100;

/** Where an image's pages are: under its appliance, as in the API. */
export function imagePath(i: Pick<Located<Image>, 'dbId' | 'parentUri'>): string {
  const aid = /appliances\/(\d+)$/.exec(i.parentUri ?? '')?.[1] ?? '0';
  return `${BASE}/appliances/${aid}/images/${i.dbId}`;
}

/** How long the build took (or has taken so far). */
function took(i: Located<Image>, now: number): string {
  const start = Date.parse(i.created ?? '');
  const end = jobState(i.status ?? {}) === 'running' ? now : Date.parse(i.lastModified ?? '');
  return Number.isFinite(start) && Number.isFinite(end) ? duration(end - start) : '';
}

function progress(i: Located<Image>): Html {
  const pct = i.status?.percentage ?? 0;
  return html`<progress max="100" value="${pct}" aria-label="Progress of image ${i.dbId}">${pct}%</progress>`;
}

const label = (i: Located<Image>): string => `${i.name ?? '?'} ${i.version ?? ''} · ${i.targetFormat?.name ?? ''}`;

function row(i: Located<Image>, now: number): Html {
  const s = i.status ?? {};
  const state = jobState(s);
  return html`<tr data-job="${i.dbId}"${state === 'running' ? html` data-running` : ''}>
<td data-label="Image"><a href="${imagePath(i)}">${label(i)}</a></td>
<td data-label="Status" class="state-${state}"><span data-words>${stateWords(s)}</span></td>
<td data-label="Progress">${progress(i)}</td>
<td data-label="Started"><time datetime="${i.created}">${(i.created ?? '').replace('T', ' ').slice(0, 19)}</time></td>
<td data-label="Duration">${took(i, now)}</td>
<td data-label="Size" class="num">${bytes(i.fileSize)}</td>
</tr>`;
}

export function imageListPage(session: Session, all: ReadonlyArray<Located<Image>>, pageNo: number, now: number): Html {
  const sorted = [...all].sort((a, b) => (b.dbId ?? 0) - (a.dbId ?? 0));
  const pages = Math.max(1, Math.ceil(sorted.length / IMAGES_PER_PAGE));
  const p = Math.min(Math.max(1, pageNo), pages);
  const shown = sorted.slice((p - 1) * IMAGES_PER_PAGE, p * IMAGES_PER_PAGE);
  const running = sorted.filter((i) => jobState(i.status ?? {}) === 'running').length;
  const pager =
    pages > 1
      ? html`<nav class="pager" aria-label="Pages">${p > 1 ? html`<a href="${BASE}/images?page=${p - 1}">Newer</a>` : ''}<span>Page ${p} of ${pages}</span>${p < pages ? html`<a href="${BASE}/images?page=${p + 1}">Older</a>` : ''}</nav>`
      : '';
  const body = sorted.length
    ? html`<p>${sorted.length} images, ${running} building. <a href="${BASE}/images${p > 1 ? `?page=${p}` : ''}">Reload</a> to see the latest state.</p>
<table class="stack"><caption class="muted">Images ${(p - 1) * IMAGES_PER_PAGE + 1} to ${(p - 1) * IMAGES_PER_PAGE + shown.length}, newest first</caption>
<thead><tr><th scope="col">Image</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Started</th><th scope="col">Duration</th><th scope="col" class="num">Size</th></tr></thead>
<tbody>${shown.map((i) => row(i, now))}</tbody></table>${pager}`
    : html`<p>No images yet. Generate one with the API, the CLI (<code>appliance-forge apply</code>) or the client library.</p>`;
  return page({ title: 'Images and builds', session, current: 'images', body });
}

function publicationRows(pubs: ReadonlyArray<Located<PublishImage>>): Html {
  if (!pubs.length) return html`<p>Not published to Glance.</p>`;
  return html`<table class="stack"><thead><tr><th scope="col">Display name</th><th scope="col">Status</th><th scope="col">Glance image id</th><th scope="col">Project</th></tr></thead>
<tbody>${pubs.map((p) => {
    const o = p as Located<PublishImage> & { displayName?: string; keystoneProject?: string };
    return html`<tr><td data-label="Display name">${o.displayName}</td><td data-label="Status" class="state-${jobState(p.status ?? {})}">${stateWords(p.status ?? {})}</td><td data-label="Glance image id"><code>${p.cloudId ?? ''}</code></td><td data-label="Project">${o.keystoneProject}</td></tr>`;
  })}</tbody></table>`;
}

function sbomSection(i: Located<Image>, sbom: SbomTable | string | undefined, q: string): Html {
  if (sbom === undefined) return html`<p>No SBOM: the image is not generated yet.</p>`;
  if (typeof sbom === 'string') return html`<p>No SBOM shown: ${sbom}</p>`;
  const found = searchPackages(sbom, q);
  return html`<h3>Licenses</h3>
<table><thead><tr><th scope="col">License (declared)</th><th scope="col" class="num">Packages</th></tr></thead>
<tbody>${sbom.licenses.map(([l, n]) => html`<tr><th scope="row">${l}</th><td class="num">${n}</td></tr>`)}</tbody></table>
<h3>Packages</h3>
<form method="get" action="${imagePath(i)}" role="search"><label for="q">Search the packages (name, version, license, purl)</label>
<input type="search" id="q" name="q" value="${q}"> <button type="submit">Search</button></form>
<p aria-live="polite">${q.trim() ? `${found.length} of ${sbom.packages.length} packages match ${JSON.stringify(q.trim())}.` : `${sbom.packages.length} packages.`}</p>
<table class="stack" id="packages"><thead><tr><th scope="col">Package</th><th scope="col">Version</th><th scope="col">License</th><th scope="col">purl</th></tr></thead>
<tbody>${found.map((p) => html`<tr><td data-label="Package">${p.name}</td><td data-label="Version">${p.version}</td><td data-label="License">${p.license}</td><td data-label="purl"><code>${p.purl}</code></td></tr>`)}</tbody></table>`;
}

export interface ImageDetail {
  image: Located<Image>;
  publications: ReadonlyArray<Located<PublishImage>>;
  sbom: SbomTable | string | undefined;
  q: string;
  now: number;
}

export function imagePage(session: Session, d: ImageDetail): Html {
  const i = d.image;
  const s = i.status ?? {};
  const state = jobState(s);
  const path = imagePath(i);
  const aid = path.split('/')[3];
  const file = i.fileName && s.complete ? html`<a href="${path}/download" download="${i.fileName}">Download ${i.fileName}</a> (${bytes(i.fileSize)})` : html`<span class="muted">not generated yet</span>`;
  const body = html`<div data-job="${i.dbId}"${state === 'running' ? html` data-running` : ''}>
<dl>
<dt>Appliance</dt><dd><a href="${BASE}/appliances/${aid}">${i.name} ${i.version}</a></dd>
<dt>Format</dt><dd>${i.targetFormat?.name}${i.compress ? ' (compressed)' : ''}</dd>
<dt>Distribution</dt><dd>${i.distributionName}</dd>
<dt>Status</dt><dd class="state-${state}"><span data-words>${stateWords(s)}</span></dd>
<dt>Progress</dt><dd>${progress(i)}</dd>
<dt>Started</dt><dd><time datetime="${i.created}">${i.created}</time></dd>
<dt>Duration</dt><dd>${took(i, d.now)}</dd>
<dt>File</dt><dd>${file}</dd>
<dt>Size</dt><dd>${i.fileSize !== undefined ? `${bytes(i.fileSize)} (${i.fileSize} bytes)` : ''}</dd>
<dt>SHA-256</dt><dd><code id="sha256">${i.sha256sum ?? ''}</code></dd>
</dl>
</div>
<p><a href="${path}">Reload</a> to see the latest state.
${session.readOnly ? '' : html`${state === 'running' ? html` <a class="button" href="${path}/cancel">Cancel the build</a>` : ''} <a class="button quiet" href="${path}/delete">Delete the image</a>`}</p>
<h2>Publication in Glance</h2>
${publicationRows(d.publications)}
<h2>Software bill of materials</h2>
${sbomSection(i, d.sbom, d.q)}`;
  return page({ title: `Image ${label(i)}`, session, current: 'images', body });
}
