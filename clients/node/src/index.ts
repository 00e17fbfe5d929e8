/**
 * @promptd/client: a zero-dependency Node client for the promptd sidecar.
 *
 * Layers, bottom up: reader/writer (bytes <-> lines/messages), connection (JSON-RPC over a pair
 * of streams), process (the spawned sidecar and its ordered shutdown), client (typed methods,
 * host providers, events).
 */

export { PromptdClient, PRODUCE_METHOD, EVENT_PREFIX, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_START_TIMEOUT_MS } from "./client.js";
export type { ClientHooks, EventHandler, HostProvider, HostProviderRegistration, ProduceRequest, StartOptions } from "./client.js";
export { Connection, CANCEL_METHOD, DEFAULT_MAX_MESSAGE_BYTES } from "./connection.js";
export type {
  ConnectionOptions,
  ConnectionState,
  Disposable,
  HandlerContext,
  NotificationHandler,
  RequestHandler,
  RequestOptions,
  ResponseHandler,
} from "./connection.js";
export {
  ConnectionClosedError,
  ConnectionDisposedError,
  ConnectionError,
  ErrorCodes,
  HostProviderError,
  MessageTooLargeError,
  ProtocolError,
  ProtocolVersionError,
  RequestTimeoutError,
  ResponseError,
  StartError,
} from "./errors.js";
export type { ErrorObject, ResponseErrorCode, SidecarReport } from "./errors.js";
export { SidecarProcess, DEFAULT_GRACE_MS } from "./process.js";
export { StderrTail, DEFAULT_STDERR_BYTES, DEFAULT_STDERR_LINES } from "./stderr.js";
export type { StderrOptions } from "./stderr.js";
export type { ExitInfo, ShutdownOptions, ShutdownResult, ShutdownStep, SpawnOptions } from "./process.js";
export { LineReader, LineSplitter, DEFAULT_MAX_LINE_BYTES } from "./reader.js";
export { MessageWriter } from "./writer.js";
export { classify } from "./messages.js";
export type { Id, Message, NotificationMessage, RequestMessage, ResponseMessage } from "./messages.js";
export * from "./generated.js";
