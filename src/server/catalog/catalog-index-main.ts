// The start index writer, a child process of a server's start (start-index.ts): the data file's full
// parse stays out of the server's memory. Arguments: data file, index folder, index file, release codename.
import { OS_RELEASES } from '../../model/releases';
import { writeStartIndex } from './start-index';

const [path, indexDir, indexFile, codename] = process.argv.slice(2);
const release = OS_RELEASES.find((r) => r.codename === codename);
if (!path || !indexDir || !indexFile || !release) {
  process.stderr.write('usage: catalog-index-main.js DATA_FILE INDEX_DIR INDEX_FILE CODENAME\n');
  process.exitCode = 2;
} else {
  writeStartIndex(path, indexDir, indexFile, release);
}
