// Drift test (style example 3): the operations table must equal the reference endpoint list, line by line.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fillPath, operations, pathParamNames } from '../../src/model/operations';
import { documents } from '../../src/model/resources';

const REFERENCE = join(__dirname, '../../../shared/reference/endpoints-in-scope.txt');

describe('operations table', () => {
  it('matches endpoints-in-scope.txt', () => {
    const rows = readFileSync(REFERENCE, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => {
        const m = /^(\w+)\s+(\S+)\s+\[(\w+)\]\s+req=(\S+)\s+resp=(\S+)\s+q=(\S+)/.exec(l);
        expect(m, l).not.toBeNull();
        const [, method, path, id, req, resp, q] = m!;
        return { id, method, path, request: req === '-' ? null : req, response: resp === '-' ? null : resp, query: q === '-' ? [] : q!.split(',') };
      });
    expect(rows).toHaveLength(76);
    expect(operations.filter((o) => !('extension' in o)).map(({ id, method, path, request, response, query }) => ({ id, method, path, request, response, query: [...query] }))).toEqual(rows);
  });

  it('lists its extensions, each beyond the reference list', () => {
    expect(operations.filter((o) => 'extension' in o).map((o) => o.id)).toEqual(['machineImageSbom_download']);
  });

  it('names only documents the model knows', () => {
    for (const op of operations) {
      if (op.request) expect(documents, op.id).toHaveProperty(op.request);
      if (op.response) expect(documents, op.id).toHaveProperty(op.response);
    }
  });

  it('never retries a POST and marks uploads and downloads', () => {
    for (const op of operations) expect(op.idempotent, op.id).toBe(op.method !== 'POST');
    const binary = Object.fromEntries(operations.filter((o) => 'binary' in o).map((o) => [o.id, (o as { binary?: string }).binary]));
    expect(binary).toEqual({
      machineImage_download: 'download',
      machineImage_downloadFile: 'download',
      machineImageSbom_download: 'download',
      mySoftwareArtifact_download: 'download',
      mySoftwareArtifact_downloadFile: 'download',
      mySoftwareArtifact_upload: 'upload',
    });
  });

  it('fills paths one encoded segment per parameter', () => {
    expect(pathParamNames('/users/{uid}/appliances/{aid}')).toEqual(['uid', 'aid']);
    expect(fillPath('/users/{uid}/appliances/{aid}', { uid: 'a/../b', aid: 7 })).toBe('/users/a%2F..%2Fb/appliances/7');
    expect(() => fillPath('/users/{uid}', {})).toThrow(/missing path parameter "uid"/);
  });
});
