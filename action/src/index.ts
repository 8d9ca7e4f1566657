// The Action's entry (action.yml's `main: dist/index.js`): the Node check (src/node-floor.ts), then the step
// (main.ts, bundled beside this file as dist/main.js by scripts/build-action.mjs). A file of its own, built
// for old Nodes, so that a Node below the floor parses it and gets one line and exit 2 rather than a crash
// in the bundle (which targets node20 and loads better-sqlite3 when installed).
import { exitIfNodeTooOld } from '../../src/node-floor';

exitIfNodeTooOld();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- external in the build: dist/main.js, loaded only past the check
require('./main');
