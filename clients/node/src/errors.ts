/**
 * Errors the client raises. Two families, kept apart on purpose (as vscode-jsonrpc does):
 *
 * - `ResponseError`: the server answered, and the answer is a JSON-RPC error (code, message,
 *   data). The connection is fine; the request was not.
 * - `ConnectionError` and its subclasses: no answer can come (the stream closed, the connection
 *   was disposed) or the caller stopped waiting (timeout).
 *
 * No I/O here; nothing to import.
 */

/** Wire codes promptd uses (JSON-RPC 2.0 section 5.1, LSP's cancel code, the shutdown code). */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ServerShutDown: -32002,
  RequestCancelled: -32800,
} as const;

/** A JSON-RPC error object as it travels on the wire. */
export interface ErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** The server (or, for server-to-client requests, the host) answered with an error. */
export class ResponseError extends Error {
  override readonly name = "ResponseError";
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }

  /** `data.kind`, promptd's machine-readable error kind, when the server sent one. */
  get kind(): string | undefined {
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

/** The peer's stream ended or failed (the sidecar exited, crashed, or closed its stdout). */
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
