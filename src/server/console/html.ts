// The console's one escape and the tagged template every page is written with: each interpolated value is
// escaped unless it is already Html (a fragment made by `html` itself), so a name or an SBOM field that
// holds markup shows as text. Arrays of fragments are joined; undefined and null write nothing.

/** A fragment of HTML made by `html` (or `raw` for a constant): the only thing written unescaped. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or a quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function write(v: HtmlValue): string {
  if (v === undefined || v === null || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return (v as readonly HtmlValue[]).map(write).join('');
  return escapeHtml(String(v));
}

/** html`<td>${name}</td>`: the literal parts as written, every value escaped. */
export function html(parts: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = parts[0]!;
  for (let i = 0; i < values.length; i++) out += write(values[i]) + parts[i + 1]!;
  return new Html(out);
}
