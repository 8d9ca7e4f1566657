// The client library's public surface.
export { baseUrlProblem, createClient, type Client, type ClientOptions, type DownloadOptions, type DownloadOpId } from './client';
export type { ArgsOf, CallOptions, OperationMethods, ResultOf, SendResult } from './methods';
export type { Auth } from './sign';
export type { CacheOptions } from './cache';
export { DEFAULT_RETRY, RETRY_STATUSES, backoffDelay, isRetryable, parseRetryAfter, type Outcome, type RetryPolicy } from './retry';
export { failureKind, proxyFromEnv, type FailureKind } from './transport';
export { redactTarget, type TraceEntry } from './trace';
export { jobState, type JobState } from '../model/job-state';
export { jobOf, type Job, type JobTarget, type WaitForJobOptions } from './jobs';
export { pollDelay, sleep, waitUntil, type WaitOptions, type WaitResult } from './waiter';
export type { DownloadResult, Progress, UploadSource } from './transfer';
export { encodeComponent, queryString, type QueryValue } from './wire';
