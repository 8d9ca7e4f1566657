// FIQL for lists and searches (wire contract §7), shared by the client and the server.
export { parseFiql, MAX_DEPTH, MAX_QUERY_LENGTH } from './parser';
export type { FiqlNode, FiqlComparison, FiqlGroup, FiqlOp } from './parser';
export { fiql, quoteFiqlValue } from './builder';
export { compileFiql, fieldSelectors, globMatcher, parseDateSpan } from './compiler';
export type { Predicate, Selector, SelectorType, Selectors } from './compiler';
export { listQuery } from './list-query';
export type { ListHints, ListOptions, ListResult } from './list-query';
