/**
 * Errors the client raises. Two families, kept apart on purpose (as vscode-jsonrpc does):
 *
 * - `ResponseError`: the server answered, and the answer is a JSON-RPC error (code, message,
 *   data). The connection is fine; the request was not.
 * - `ConnectionError` and its subclasses: no answer can come (the stream closed, the connection
 *   was disposed) or the caller stopped waiting (timeout).
 *
 * No I/O here. The codes and kinds are generated from the protocol document (generated.ts).
 */

import { ErrorCodes, type ErrorCode, type ErrorKind } from "./generated.js";

/** Every wire code by name, generated from protocol/openrpc.json (`x-errors`). */
export { ErrorCodes };
export type { ErrorCode, ErrorKind } from "./generated.js";

/** A JSON-RPC error object as it travels on the wire. */
export interface ErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * An error's code: one of the protocol's (ErrorCode, by name in ErrorCodes), or a code newer than
 * these types (any other number stays representable).
 */
export type ResponseErrorCode = ErrorCode | (number & {});

/** The server (or, for server-to-client requests, the host) answered with an error. */
export class ResponseError extends Error {
  override readonly name = "ResponseError";
  /** One of ErrorCode (compare with ErrorCodes.InvalidParams, ...), or a code newer than them. */
  readonly code: ResponseErrorCode;
  readonly data: unknown;

  constructor(code: ResponseErrorCode, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }

  /**
   * `data.kind`, promptd's machine-readable error kind, when the server sent one (one of
   * ErrorKind, or a kind newer than these types).
   */
  get kind(): ErrorKind | (string & {}) | undefined {
    const data = this.data;
    if (typeof data === "object" && data !== null && "kind" in data) {
      const kind: unknown = data.kind;
      return typeof kind === "string" ? kind : undefined;
    }
    return undefined;
  }

  toJSON(): ErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /** Builds a ResponseError from whatever arrived in a reply's `error` member. */
  static fromWire(error: unknown): ResponseError {
    if (typeof error === "object" && error !== null) {
      const code: unknown = "code" in error ? error.code : undefined;
      const message: unknown = "message" in error ? error.message : undefined;
      const data: unknown = "data" in error ? error.data : undefined;
      return new ResponseError(
        typeof code === "number" ? code : ErrorCodes.InternalError,
        typeof message === "string" ? message : "Malformed error object",
        data,
      );
    }
    return new ResponseError(ErrorCodes.InternalError, "Malformed error object", error);
  }
}

/** No answer will come for this request; the reason is in the subclass. */
export class ConnectionError extends Error {
  override name = "ConnectionError";
}

/**
 * No more requests can be answered: the sidecar's stream ended or failed (it exited or crashed),
 * or the client is stopping or stopped. Calls made while `stop()` runs or after it, and calls the
 * server refused because it is shutting down (-32002), all fail with this one class.
 */
export class ConnectionClosedError extends ConnectionError {
  override name = "ConnectionClosedError";
}

/** This side disposed the connection; requests still waiting are abandoned. */
export class ConnectionDisposedError extends ConnectionError {
  override name = "ConnectionDisposedError";
}

/** The request's `timeoutMs` passed; `$/cancelRequest` was sent and a late reply is dropped. */
export class RequestTimeoutError extends ConnectionError {
  override name = "RequestTimeoutError";
  readonly method: string;
  readonly timeoutMs: number;

  constructor(method: string, timeoutMs: number) {
    super(`${method} got no reply within ${timeoutMs} ms`);
    this.method = method;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A message was not sent because its line would exceed `maxMessageBytes` (the server's
 * `max_message_bytes`, 16 MiB by default): the server would refuse it unread.
 */
export class MessageTooLargeError extends Error {
  override readonly name = "MessageTooLargeError";
  readonly method: string | undefined;
  readonly bytes: number;
  readonly limit: number;

  constructor(method: string | undefined, bytes: number, limit: number) {
    super(`${method ?? "a reply"} was not sent: its line is ${bytes} bytes, over the ${limit}-byte limit (maxMessageBytes; the server's max_message_bytes)`);
    this.method = method;
    this.bytes = bytes;
    this.limit = limit;
  }
}

/** What is known about the sidecar when it failed: its exit, and the last lines of its stderr. */
export interface SidecarReport {
  /** Set when the process had exited. */
  exit?: { code: number | null; signal: string | null } | undefined;
  stderr: string[];
}

/**
 * `PromptdClient.start` failed: the executable could not be run, the process exited before it
 * answered `initialize`, `initialize` failed or timed out. The message says why, with the exit
 * status and the last stderr lines; `cause` is the underlying error. The process is gone.
 */
export class StartError extends Error {
  override name = "StartError";
  readonly exit: SidecarReport["exit"];
  readonly stderr: string[];
  /** The spawn error's code (ENOENT, EACCES) when the executable could not be run. */
  readonly code: string | undefined;

  constructor(message: string, report: SidecarReport, options?: { cause?: unknown; code?: string | undefined }) {
    super(withReport(message, report), options?.cause === undefined ? undefined : { cause: options.cause });
    this.exit = report.exit;
    this.stderr = report.stderr;
    this.code = options?.code;
  }
}

/** The server answered `initialize` with another protocol version than the one requested. */
export class ProtocolVersionError extends StartError {
  override name = "ProtocolVersionError";
  readonly requested: string;
  readonly offered: string;

  constructor(requested: string, offered: string, report: SidecarReport) {
    super(`protocol version mismatch: the client speaks ${requested}, the server answered ${offered}`, report);
    this.requested = requested;
    this.offered = offered;
  }
}

/** A host provider's callback threw (or returned a wrong shape); reported to `onError`. */
export class HostProviderError extends Error {
  override readonly name = "HostProviderError";
  readonly provider: string;

  constructor(provider: string, cause: unknown) {
    super(`host provider ${provider} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.provider = provider;
  }
}

/** `exited with status 2` / `was killed by SIGKILL`, then the stderr tail, for error messages. */
export function withReport(message: string, report: SidecarReport): string {
  let text = message;
  if (report.exit !== undefined) {
    text += report.exit.signal !== null ? `; the sidecar was killed by ${report.exit.signal}` : `; the sidecar exited with status ${report.exit.code}`;
  }
  if (report.stderr.length > 0) {
    text += `; its last stderr lines:\n${report.stderr.join("\n")}`;
  } else if (report.exit !== undefined) {
    text += " (nothing on stderr)";
  }
  return text;
}

/**
 * The peer sent something that is not JSON-RPC (an unparsable line, an over-long line, a value
 * that is neither request, notification nor response). Reported through `onError`; it never
 * rejects a request by itself, since its id cannot be known.
 */
export class ProtocolError extends Error {
  override readonly name = "ProtocolError";
  readonly value: unknown;

  constructor(message: string, value?: unknown) {
    super(message);
    this.value = value;
  }
}
