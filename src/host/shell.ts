// One word for a POSIX shell, whatever it holds: single quotes, each quote of its own closed and escaped.
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
