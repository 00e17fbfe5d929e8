/**
 * A JSON-RPC 2.0 connection over a pair of streams: id correlation, timeouts and cancellation
 * (`$/cancelRequest`), requests and notifications from the peer, and what happens when the
 * streams end. Reading and writing are delegated to LineReader and MessageWriter; spawning a
 * process is someone else's job (process.ts), so this is tested over in-memory streams.
 */

import type { Readable, Writable } from "node:stream";

import {
  ConnectionClosedError,
  ConnectionDisposedError,
  ErrorCodes,
  MessageTooLargeError,
  ProtocolError,
  RequestTimeoutError,
  ResponseError,
} from "./errors.js";
import type { ErrorKind } from "./generated.js";
import { classify, type Id, type Incoming } from "./messages.js";
import { DEFAULT_MAX_LINE_BYTES, LineReader } from "./reader.js";
import { MessageWriter } from "./writer.js";

export const CANCEL_METHOD = "$/cancelRequest";
// How much of an unparsable line an error keeps: enough to recognise it, never a whole body.
const ERROR_SNIPPET_CHARS = 200;
/** The server's default `max_message_bytes`: the longest line it accepts. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface RequestOptions {
  /** Aborting sends `$/cancelRequest` and rejects with `signal.reason` (as fetch does). */
  signal?: AbortSignal;
  /**
   * Gives up after this long: `$/cancelRequest` is sent and RequestTimeoutError raised. Overrides
   * the connection's `defaultTimeoutMs`; 0 or Infinity waits without a limit.
   */
  timeoutMs?: number;
}

export interface HandlerContext {
  id: Id;
  method: string;
  /** Aborted when the peer cancels the request or the connection ends. */
  signal: AbortSignal;
}

export type RequestHandler = (params: unknown, context: HandlerContext) => unknown;
export type NotificationHandler = (params: unknown, method: string) => void;
export type ResponseHandler = (response: { id: Id | null; result: unknown; error: ResponseError | undefined }) => void;

export interface Disposable {
  dispose(): void;
}

export interface ConnectionOptions {
  /** Applied to requests that set no `timeoutMs` of their own; none by default (0 is none too). */
  defaultTimeoutMs?: number;
  /** Longest incoming line held (default 128 MiB); a longer one is dropped and reported. */
  maxLineBytes?: number;
  /**
   * Longest outgoing line (default 16 MiB, the server's `max_message_bytes`): a request,
   * notification or reply over it is refused before sending with MessageTooLargeError.
   */
  maxMessageBytes?: number;
  /**
   * Sees every line in both directions, without its newline (for debugging: it sees message
   * bodies, and runs on the path of every frame, so keep it quick). A trace that throws is
   * reported to `onError` and the frame goes on.
   */
  trace?: (direction: TraceDirection, line: string) => void;
}

/** Which way a traced line went: written by this client, or by the peer. */
export type TraceDirection = "sent" | "received";

export type ConnectionState = "open" | "closed" | "disposed";

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  cleanup(): void;
}

export class Connection {
  private readonly reader: LineReader;
  private readonly writer: MessageWriter;
  private readonly pending = new Map<Id, Pending>();
  private readonly running = new Map<Id, AbortController>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Set<{ method: string | undefined; handler: NotificationHandler }>();
  private readonly responseHandlers = new Set<ResponseHandler>();
  private readonly errorHandlers = new Set<(error: Error) => void>();
  private readonly closeHandlers = new Set<(error: Error | undefined) => void>();
  private nextId = 1;
  private currentState: ConnectionState = "open";

  constructor(
    input: Readable,
    output: Writable,
    private readonly options: ConnectionOptions = {},
  ) {
    this.writer = new MessageWriter(output, options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, options.trace && ((line) => this.traced("sent", line)));
    this.reader = new LineReader(
      input,
      {
        line: (text) => this.onLine(text),
        oversize: (bytes) => this.reportError(new ProtocolError(`dropped an incoming line of ${bytes} bytes (over the limit)`)),
        end: (error) => this.close(error),
      },
      options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    );
  }

  get state(): ConnectionState {
    return this.currentState;
  }

  /** Requests sent and not yet settled. */
  /** The longest line this side sends; `start` follows the server's `limits.max_message_bytes`. */
  setMaxMessageBytes(bytes: number): void {
    this.writer.setMaxLineBytes(bytes);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  sendRequest(method: string, params?: unknown, options: RequestOptions = {}): Promise<unknown> {
    const refused = this.refusal();
    if (refused !== undefined) {
      return Promise.reject(refused);
    }
    const { signal } = options;
    if (signal?.aborted) {
      return Promise.reject(signal.reason);
    }
    const id = this.nextId++;
    const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs;
    return new Promise<unknown>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const giveUp = (reason: unknown): void => {
        if (this.settle(id)) {
          // Fire and forget: the server answers the cancelled request with -32800, which
          // arrives after we stopped waiting and goes to onUnmatchedResponse.
          this.writer.write({ jsonrpc: "2.0", method: CANCEL_METHOD, params: { id } }).catch(() => undefined);
          reject(reason);
        }
      };
      const onAbort = (): void => giveUp(signal?.reason);
      const cleanup = (): void => {
        if (timer !== undefined) {
          clearTimeout(timer);
        }
        signal?.removeEventListener("abort", onAbort);
      };
      this.pending.set(id, { method, resolve, reject, cleanup });
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => giveUp(new RequestTimeoutError(method, timeoutMs)), timeoutMs);
      }
      const frame = params === undefined ? { jsonrpc: "2.0" as const, id, method } : { jsonrpc: "2.0" as const, id, method, params };
      this.writer.write(frame).catch((error: unknown) => {
        if (this.settle(id)) {
          reject(error);
        }
      });
    });
  }

  sendNotification(method: string, params?: unknown): Promise<void> {
    const refused = this.refusal();
    if (refused !== undefined) {
      return Promise.reject(refused);
    }
    return this.writer.write(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
  }

  /** Serves requests the peer sends (for promptd: `provider/produce`). One handler per method. */
  onRequest(method: string, handler: RequestHandler): Disposable {
    this.requestHandlers.set(method, handler);
    return { dispose: () => this.requestHandlers.get(method) === handler && this.requestHandlers.delete(method) };
  }

  /** Notifications from the peer; with no method, every notification. */
  onNotification(method: string | undefined, handler: NotificationHandler): Disposable {
    const entry = { method, handler };
    this.notificationHandlers.add(entry);
    return { dispose: () => this.notificationHandlers.delete(entry) };
  }

  /** Replies nobody waits for: late ones after a timeout or cancel, and id-null errors. */
  onUnmatchedResponse(handler: ResponseHandler): Disposable {
    this.responseHandlers.add(handler);
    return { dispose: () => this.responseHandlers.delete(handler) };
  }

  /** Protocol errors from the peer and failures of local handlers; never thrown at anyone. */
  onError(handler: (error: Error) => void): Disposable {
    this.errorHandlers.add(handler);
    return { dispose: () => this.errorHandlers.delete(handler) };
  }

  /** Called once when the input ends or fails (not on dispose). */
  onClose(handler: (error: Error | undefined) => void): Disposable {
    this.closeHandlers.add(handler);
    return { dispose: () => this.closeHandlers.delete(handler) };
  }

  /** Ends our output (the peer's stdin) after what is queued; requests may still be answered. */
  end(): Promise<void> {
    return this.writer.end();
  }

  /** Stops reading and abandons every waiting request with ConnectionDisposedError. */
  dispose(): void {
    if (this.currentState !== "open") {
      return;
    }
    this.currentState = "disposed";
    this.reader.dispose();
    this.abandon(new ConnectionDisposedError("the connection was disposed"));
  }

  private refusal(): Error | undefined {
    if (this.currentState === "disposed") {
      return new ConnectionDisposedError("the connection was disposed");
    }
    if (this.currentState === "closed" || this.writer.closed) {
      return new ConnectionClosedError("the connection is closed");
    }
    return undefined;
  }

  /** Removes a pending request and returns it, or undefined when it was already settled (so exactly one outcome wins). */
  private settle(id: Id): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry !== undefined) {
      this.pending.delete(id);
      entry.cleanup();
    }
    return entry;
  }

  private close(error: Error | undefined): void {
    if (this.currentState !== "open") {
      return;
    }
    this.currentState = "closed";
    this.abandon(new ConnectionClosedError("the peer closed the connection", error === undefined ? undefined : { cause: error }));
    for (const handler of this.closeHandlers) {
      this.guard(() => handler(error));
    }
  }

  private abandon(error: Error): void {
    for (const id of [...this.pending.keys()]) {
      this.settle(id)?.reject(error);
    }
    for (const controller of this.running.values()) {
      controller.abort(error);
    }
    this.running.clear();
  }

  private traced(direction: TraceDirection, line: string): void {
    try {
      this.options.trace?.(direction, line);
    } catch (error: unknown) {
      this.reportError(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private onLine(text: string): void {
    if (this.options.trace !== undefined) {
      this.traced("received", text);
    }
    if (text.trim() === "") {
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.reportError(new ProtocolError("the peer sent a line that is not JSON", text.slice(0, ERROR_SNIPPET_CHARS)));
      return;
    }
    for (const message of classify(value)) {
      this.dispatch(message);
    }
  }

  private dispatch(message: Incoming): void {
    switch (message.type) {
      case "response":
        this.onResponse(message.id, message.result, message.isError ? ResponseError.fromWire(message.error) : undefined);
        return;
      case "request":
        void this.serve(message.id, message.method, message.params);
        return;
      case "notification":
        this.onPeerNotification(message.method, message.params);
        return;
      case "invalid":
        this.reportError(new ProtocolError(`the peer sent an invalid message: ${message.reason}`, message.value));
        return;
    }
  }

  private onResponse(id: Id | null, result: unknown, error: ResponseError | undefined): void {
    const entry = id === null ? undefined : this.settle(id);
    if (entry === undefined) {
      for (const handler of this.responseHandlers) {
        this.guard(() => handler({ id, result, error }));
      }
      return;
    }
    if (error !== undefined) {
      entry.reject(error);
    } else {
      entry.resolve(result);
    }
  }

  private onPeerNotification(method: string, params: unknown): void {
    if (method === CANCEL_METHOD) {
      const id: unknown = typeof params === "object" && params !== null && "id" in params ? params.id : undefined;
      if (typeof id === "string" || typeof id === "number") {
        this.running.get(id)?.abort(new ResponseError(ErrorCodes.RequestCancelled, "Request cancelled", { kind: "cancelled" satisfies ErrorKind }));
      }
      return;
    }
    for (const entry of this.notificationHandlers) {
      if (entry.method === undefined || entry.method === method) {
        this.guard(() => entry.handler(params, method));
      }
    }
  }

  /** Answers one request from the peer: exactly one reply, whatever the handler does. */
  private async serve(id: Id, method: string, params: unknown): Promise<void> {
    const handler = this.requestHandlers.get(method);
    if (handler === undefined) {
      await this.reply(id, { error: { code: ErrorCodes.MethodNotFound, message: "Method not found", data: { kind: "method_not_found" satisfies ErrorKind, method } } });
      return;
    }
    const controller = new AbortController();
    this.running.set(id, controller);
    try {
      const result: unknown = await handler(params, { id, method, signal: controller.signal });
      await this.reply(id, controller.signal.aborted ? cancelledReply() : { result: result === undefined ? null : result });
    } catch (error: unknown) {
      if (error instanceof ResponseError) {
        await this.reply(id, { error: error.toJSON() });
      } else if (controller.signal.aborted) {
        await this.reply(id, cancelledReply());
      } else {
        // Like the server: the peer learns that it failed, not why; the host hears the detail.
        this.reportError(error instanceof Error ? error : new Error(String(error)));
        await this.reply(id, { error: { code: ErrorCodes.InternalError, message: "Internal error", data: { kind: "internal" satisfies ErrorKind } } });
      }
    } finally {
      this.running.delete(id);
    }
  }

  private async reply(id: Id, body: { result: unknown } | { error: { code: number; message: string; data?: unknown } }): Promise<void> {
    if (this.currentState !== "open") {
      return;
    }
    try {
      await this.writer.write({ jsonrpc: "2.0", id, ...body });
    } catch (error: unknown) {
      this.reportError(error instanceof Error ? error : new Error(String(error)));
      if ((error instanceof TypeError || error instanceof MessageTooLargeError) && "result" in body) {
        // The handler's result cannot be encoded (a BigInt, a cycle) or is too long to send:
        // the peer still gets its one reply instead of waiting for a timeout.
        await this.writer.write({ jsonrpc: "2.0", id, error: { code: ErrorCodes.InternalError, message: "Internal error", data: { kind: "internal" satisfies ErrorKind } } }).catch(() => undefined);
      }
    }
  }

  private reportError(error: Error): void {
    for (const handler of this.errorHandlers) {
      try {
        handler(error);
      } catch {
        // An error handler that throws has nowhere left to report to.
      }
    }
  }

  /** Runs a listener so that its exception is reported instead of breaking the read loop. */
  private guard(run: () => void): void {
    try {
      run();
    } catch (error: unknown) {
      this.reportError(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

function cancelledReply(): { error: { code: number; message: string; data: unknown } } {
  return { error: { code: ErrorCodes.RequestCancelled, message: "Request cancelled", data: { kind: "cancelled" satisfies ErrorKind } } };
}
