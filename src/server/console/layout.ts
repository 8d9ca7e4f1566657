// The page around every console view: the document head (viewport, the two assets), a skip link, the
// navigation with the sign-out form, and the main region. Also the words the pages share for a job's
// state and a duration.
import type { OpStatus } from '../../model/resources';
import { jobState } from '../../model/job-state';
import { SCRIPT, STYLE } from './assets';
import { html, type Html, type HtmlValue } from './html';
import type { Session } from './session';

export const BASE = '/console';

export interface PageOptions {
  title: string;
  session?: Session | undefined;
  body: HtmlValue;
  /** Which navigation entry is the current page. */
  current?: 'appliances' | 'images' | 'software';
}

const NAV = [
  ['images', 'Images and builds'],
  ['appliances', 'Appliances'],
  ['software', 'Software'],
] as const;

export function page(o: PageOptions): Html {
  const s = o.session;
  const nav = s
    ? html`<nav aria-label="Console"><ul>${NAV.map(([k, label]) => html`<li><a href="${BASE}/${k}"${o.current === k ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul></nav>
<form method="post" action="${BASE}/sign-out"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Sign out ${s.login}</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · appliance-forge</title>
<link rel="stylesheet" href="${BASE}/assets/${STYLE.name}">
<script src="${BASE}/assets/${SCRIPT.name}" defer></script>
</head>
<body data-jobs="${s ? `${BASE}/jobs.json` : ''}">
<a class="skip" href="#main">Skip to content</a>
<header><span class="brand">appliance-forge console</span>${nav}</header>
<main id="main" tabindex="-1">
<h1>${o.title}</h1>
${o.body}
</main>
</body>
</html>
`;
}

/** A job's state in words: queued, running at N %, complete, cancelled, failed with the reason. */
export function stateWords(s: OpStatus): string {
  const state = jobState(s);
  if (state === 'failed') return `failed: ${s.errorMessage ?? s.message ?? 'no reason given'}`;
  if (state === 'cancelled') return 'cancelled';
  if (state === 'complete') return 'complete';
  const pct = s.percentage ?? 0;
  return s.message ? `running (${pct} %): ${s.message}` : `running (${pct} %)`;
}

/** Seconds as `1 h 2 min`, `3 min 4 s` or `5 s`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Bytes as `1.5 MiB`. */
export function bytes(n: number | undefined): string {
  if (n === undefined) return '';
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${v.toFixed(1)} ${units[i]}`;
}
