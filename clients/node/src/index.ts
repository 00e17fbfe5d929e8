/**
 * @promptd/client: a zero-dependency Node client for the promptd sidecar.
 *
 * Layers, bottom up: reader/writer (bytes <-> lines/messages), connection (JSON-RPC over a pair
 * of streams), process (the spawned sidecar and its ordered shutdown), client (typed methods,
 * host providers, events).
 *
 * This file is the package's public API, and only that: the client, the connection it stands on
 * (for a client over streams of your own), the errors, the defaults the options document, and
 * the protocol's generated types and constants. The layers' own machinery (line reader and
 * splitter, message writer, stderr tail, message classifier, the generated wrappers' base class)
 * stays inside; `test/client.test.ts` lists what is exported, so a change to it is deliberate.
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
  TraceDirection,
} from "./connection.js";
export {
  ConnectionClosedError,
  ConnectionDisposedError,
  ConnectionError,
  HostProviderError,
  MessageTooLargeError,
  ProtocolError,
  ProtocolVersionError,
  RequestTimeoutError,
  ResponseError,
  StartError,
} from "./errors.js";
export type { ErrorObject, ResponseErrorCode, SidecarReport } from "./errors.js";
// The type of `client.process`; the sidecar is started with PromptdClient.start.
export type { SidecarProcess } from "./process.js";
export { DEFAULT_GRACE_MS } from "./process.js";
export type { ExitInfo, ShutdownOptions, ShutdownResult, ShutdownStep, SpawnOptions } from "./process.js";
export { DEFAULT_STDERR_BYTES, DEFAULT_STDERR_LINES } from "./stderr.js";
export { DEFAULT_MAX_LINE_BYTES } from "./reader.js";
export type { Id, Message, NotificationMessage, RequestMessage, ResponseMessage } from "./messages.js";
// Every generated type (one per schema: ComposeParams, Config, EventName, ...) and the
// generated constants; not the wrappers' base class, which PromptdClient is.
export type * from "./generated.js";
export { ERROR_KIND_CODES, EVENT_NAMES, ErrorCodes, METHOD_NAMES, PROTOCOL_VERSION } from "./generated.js";
