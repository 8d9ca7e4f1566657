// The Node appliance-forge needs, checked by every entry before it loads anything else: the command
// (src/cli/main.ts), the Action (action/src/index.ts), the server (`appliance-forge/server`) and the
// Pulumi provider (`appliance-forge/pulumi` and its runtime). Below the floor, the store's native SQLite
// module (better-sqlite3 13, a Node-API 10 addon) kills Node 20 with SIGSEGV as it loads, and npm only
// warns about `engines`: the entry says so in one line and exits 2 instead.
// It requires nothing and is written in syntax any old Node parses (no arrow functions, template strings,
// `?.` or `??`; tsc's output keeps `const` and default parameters: ES2015, Node 6 and later), so that the
// line reaches the Nodes it is for (test/package/old-node.test.ts runs it under Node 20 and Node 12).

/** The lowest Node major appliance-forge runs on: the floor of package.json's `engines` (a test keeps them equal). */
export const NODE_FLOOR = 22;

/** The line a Node below the floor gets (what it needs and how to get it), or undefined on a Node that fits. */
export function nodeTooOld(version: string = process.versions.node): string | undefined {
  const major = parseInt(version, 10);
  if (major >= NODE_FLOOR) return undefined;
  return 'appliance-forge needs Node ' + NODE_FLOOR + ' or later and this is Node ' + version + ' (' + process.execPath + '): ' +
    'eval "$(bash scripts/node.sh)" in a clone of appliance-forge brings Node ' + NODE_FLOOR + ' to this shell, or install Node ' + NODE_FLOOR + ' or later';
}

/** An entry's first statement: below the floor, print nodeTooOld's line to stderr and exit 2. */
export function exitIfNodeTooOld(): void {
  const line = nodeTooOld();
  if (line === undefined) return;
  process.stderr.write(line + '\n');
  process.exit(2);
}
