/**
 * @promptd/client: a zero-dependency Node client for the promptd sidecar.
 *
 * Layers, bottom up: reader/writer (bytes <-> lines/messages), connection (JSON-RPC over a pair
 * of streams), process (the spawned sidecar and its ordered shutdown), client (typed methods,
 * host providers, events).
 */

export { PromptdClient, PRODUCE_METHOD, EVENT_PREFIX } from "./client.js";
export type { EventHandler, HostProvider, HostProviderRegistration, ProduceRequest, ProduceResult, StartOptions } from "./client.js";
export { Connection, CANCEL_METHOD } from "./connection.js";
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
  ProtocolError,
  RequestTimeoutError,
  ResponseError,
} from "./errors.js";
export type { ErrorObject } from "./errors.js";
export { SidecarProcess } from "./process.js";
export type { ExitInfo, ShutdownOptions, ShutdownResult, ShutdownStep, SpawnOptions } from "./process.js";
export { LineReader, LineSplitter, DEFAULT_MAX_LINE_BYTES } from "./reader.js";
export { MessageWriter } from "./writer.js";
export { classify } from "./messages.js";
export type { Id, Message, NotificationMessage, RequestMessage, ResponseMessage } from "./messages.js";
export * from "./generated.js";
