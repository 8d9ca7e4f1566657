// The console's two static files, served from /console/assets/ by the package itself (no CDN, no build
// step): the style sheet, and the script that moves the progress of running builds (every page reads
// without it). Each is served under a name that carries its digest, so it may be cached for good.
import { createHash } from 'node:crypto';

const CSS = `
*{box-sizing:border-box}
html{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#fff}
body{margin:0}
a{color:#0645ad}
a:visited{color:#4b2a85}
:focus-visible{outline:3px solid #b45309;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem;z-index:1}
.skip:focus{left:.5rem}
header{background:#123;color:#fff;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center}
header a,header a:visited{color:#fff}
header .brand{font-weight:700;margin-right:auto}
header nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
header form{margin:0}
main{padding:1rem;max-width:72rem;margin:0 auto}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #ccc;vertical-align:top}
th{background:#f2f2f2}
td.num,th.num{text-align:right}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=password],input[type=search]{font:inherit;padding:.4rem;border:1px solid #555;border-radius:3px;width:100%;max-width:24rem}
button,.button{font:inherit;padding:.4rem .9rem;border:1px solid #123;border-radius:3px;background:#123;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.danger{background:#a50e0e;border-color:#a50e0e}
.button.quiet,.button.quiet:visited{background:#fff;color:#123}
header button{background:#fff;color:#123}
.inline{display:inline}
.error{color:#a50e0e;font-weight:600}
.state-failed{color:#a50e0e;font-weight:600}
.state-complete{color:#155724}
.muted{color:#555}
progress{width:8rem;vertical-align:middle}
.pager{display:flex;gap:1rem;flex-wrap:wrap}
@media (max-width:40rem){
  table.stack thead{position:absolute;left:-999px}
  table.stack tr{display:block;border-bottom:2px solid #ccc;padding:.25rem 0}
  table.stack td{display:block;border:0;padding:.15rem .25rem}
  table.stack td{text-align:left}
  table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600}
  dl{grid-template-columns:1fr}
  dd{margin-bottom:.5rem}
}
`;

const JS = `(function () {
  'use strict';
  var rows = document.querySelectorAll('[data-job][data-running]');
  var url = document.body.getAttribute('data-jobs');
  if (!rows.length || !url) return;
  var ids = [];
  rows.forEach(function (el) { ids.push(el.getAttribute('data-job')); });
  url += '?ids=' + ids.slice(0, 200).join(',');
  var left = 900;
  function next(ms) { if (--left > 0) setTimeout(tick, ms); }
  function tick() {
    fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (jobs) {
        if (!jobs) return next(5000);
        var running = 0, ended = false;
        rows.forEach(function (el) {
          var s = jobs[el.getAttribute('data-job')];
          if (!s) return;
          var p = el.querySelector('progress');
          if (p) { p.value = s.percentage; p.textContent = s.percentage + '%'; }
          var w = el.querySelector('[data-words]');
          if (w) w.textContent = s.words;
          if (s.running) running++; else ended = true;
        });
        if (ended) { location.reload(); return; }
        if (running) next(1500);
      })
      .catch(function () { next(5000); });
  }
  setTimeout(tick, 1000);
})();
`;

export interface Asset {
  /** Its path under /console/assets/. */
  name: string;
  type: string;
  body: Buffer;
}

function asset(stem: string, ext: string, type: string, text: string): Asset {
  const body = Buffer.from(text.trim() + '\n', 'utf8');
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { name: `${stem}.${digest}.${ext}`, type, body };
}

export const STYLE = asset('console', 'css', 'text/css; charset=utf-8', CSS);
export const SCRIPT = asset('console', 'js', 'text/javascript; charset=utf-8', JS);
export const ASSETS: readonly Asset[] = [STYLE, SCRIPT];
