/**
 * PromptdClient: the typed face of the sidecar. Spawns it (process.ts), speaks to it (connection.ts),
 * adds one typed method per protocol method (generated.ts), serves `provider/produce` for host
 * providers and surfaces `event/...` notifications.
 */

import { DEFAULT_MAX_MESSAGE_BYTES, type Connection, type ConnectionOptions, type Disposable, type HandlerContext, type RequestOptions } from "./connection.js";
import {
  ConnectionClosedError,
  ConnectionDisposedError,
  ErrorCodes,
  HostProviderError,
  ProtocolVersionError,
  RequestTimeoutError,
  ResponseError,
  StartError,
  withReport,
  type SidecarReport,
} from "./errors.js";
import {
  GeneratedMethods,
  PROTOCOL_VERSION,
  type Capabilities,
  type Config,
  type ErrorKind,
  type EventArgs,
  type EventName,
  type Events,
  type ProduceParams,
  type ProduceResult,
  type InitializeParams,
  type InitializeResult,
  type MethodName,
  type NotificationName,
  type Notifications,
  type ParamsOf,
  type ResultOf,
  type ServerRequestName,
} from "./generated.js";
import { DEFAULT_GRACE_MS, SidecarProcess, type ExitInfo, type ShutdownOptions, type ShutdownResult, type SpawnOptions } from "./process.js";

export const PRODUCE_METHOD = "provider/produce" satisfies ServerRequestName;
export const EVENT_PREFIX = "event/";
/** Each request's timeout unless the call or `requestTimeoutMs` says otherwise. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** How long `start` waits for the `initialize` answer (a cold Python start included). */
export const DEFAULT_START_TIMEOUT_MS = 30_000;
// How long a call that found the connection closed waits for the exit status to name it.
const CRASH_REPORT_WAIT_MS = 500;

/** What the server asks a host provider for, once per turn (the generated ProduceParams). */
export type ProduceRequest = ProduceParams;

/** A host provider's answer (the generated ProduceResult); `text: null` means nothing this turn. */
export type { ProduceResult };

export type HostProvider = (request: ProduceRequest, context: HandlerContext) => ProduceResult | Promise<ProduceResult>;

/** Any event: `event` names it, and checking it narrows `params` to that event's payload. */
export type EventHandler = (...args: EventArgs) => void;

/**
 * How a host provider is registered with `providers/register`: its `kind` is always "host", and
 * the fields of the other kinds (text, path, argv, max_bytes, env) do not apply.
 */
export type HostProviderRegistration = Omit<ParamsOf<"providers/register">, "kind" | "text" | "path" | "argv" | "max_bytes" | "env">;

/** Client-level hooks; each may also be added later with `client.onError` and the like. */
export interface ClientHooks {
  /**
   * Errors nobody awaits: a host provider's exception (HostProviderError), an event handler's,
   * malformed input from the server (ProtocolError). Without a hook they are dropped.
   */
  onError?: (error: Error) => void;
  /** Once, when the connection ends: the sidecar's stdout closed, or `stop()` ran. */
  onClose?: (error: Error | undefined) => void;
  /** Once, when the sidecar process exits: its status or the signal that ended it. */
  onExit?: (exit: ExitInfo) => void;
}

export interface StartOptions extends SpawnOptions, ClientHooks {
  clientInfo?: { name: string; version?: string };
  /**
   * Event notifications wanted: true for all, or names such as "event/gate_fired" (EventName;
   * the server refuses a name it does not know, so a misspelt one fails start with -32602).
   */
  events?: Capabilities["events"];
  /** Declare `host_providers` even before any provider is added (default: true). */
  hostProviders?: boolean;
  /**
   * Deep-merged over the server's configuration: the shape of promptd.toml (the generated
   * Config, every field optional; a field left out keeps what the server has).
   */
  config?: Config;
  tools?: InitializeParams["tools"];
  /**
   * The unit of offsets in results (default "utf16_units": `text.slice(start, end)` is the span);
   * "code_points" gives the protocol's own unit, as the shared vectors record it.
   */
  offsetUnit?: InitializeParams["offset_unit"];
  /** The version asked for (default PROTOCOL_VERSION); another answer fails start. */
  protocolVersion?: string;
  /** Each request's timeout (default 30 000 ms); a call's `{ timeoutMs }` overrides it; 0 = none. */
  requestTimeoutMs?: number;
  /** How long start waits for the `initialize` answer (default 30 000 ms). */
  startTimeoutMs?: number;
  /**
   * Longest request line sent (default: `config.max_message_bytes` when given, else 16 MiB, the
   * server's default). Set it to the server's `max_message_bytes` when that is configured
   * elsewhere (promptd.toml, PROMPTD_MAX_MESSAGE_BYTES).
   */
  maxMessageBytes?: number;
}

export class PromptdClient extends GeneratedMethods {
  private readonly providers = new Map<string, HostProvider>();
  private readonly registering = new Map<string, Promise<void>>();
  private readonly errorHandlers = new Set<(error: Error) => void>();
  private readonly closeHandlers = new Set<(error: Error | undefined) => void>();
  private readonly exitHandlers = new Set<(exit: ExitInfo) => void>();
  private closed = false;
  private stopping = false;
  /** The `initialize` answer, when `start` called it. */
  initializeResult: InitializeResult | undefined;

  /**
   * Over an existing connection (any pair of streams); `process`, when given, is what `stop`
   * ends. Most callers use `PromptdClient.start` instead.
   */
  constructor(
    readonly connection: Connection,
    readonly process?: SidecarProcess,
    hooks: ClientHooks = {},
  ) {
    super();
    addHook(this.errorHandlers, hooks.onError);
    addHook(this.closeHandlers, hooks.onClose);
    addHook(this.exitHandlers, hooks.onExit);
    connection.onRequest(PRODUCE_METHOD, (params, context) => this.produce(params, context));
    connection.onError((error) => this.emitError(error));
    connection.onClose((error) => this.emitClose(error));
    void process?.exited.then((exit) => {
      for (const handler of this.exitHandlers) {
        this.guard(() => handler(exit));
      }
    });
  }

  /**
   * Spawns `promptd serve` and calls `initialize`. Rejects with StartError (the executable could
   * not be run; the process exited, with its status and last stderr lines; `initialize` failed
   * or timed out) or ProtocolVersionError; the process is gone then.
   */
  static async start(options: StartOptions = {}): Promise<PromptdClient> {
    const sidecar = await SidecarProcess.spawn({ ...options, connection: connectionOptions(options) });
    const client = new PromptdClient(sidecar.connection, sidecar, options);
    const requested = options.protocolVersion ?? PROTOCOL_VERSION;
    let result: InitializeResult;
    try {
      result = (await sidecar.connection.sendRequest("initialize", initializeParams(options), { timeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS })) as InitializeResult;
    } catch (error: unknown) {
      let report: SidecarReport;
      if (error instanceof ConnectionClosedError) {
        report = await sidecar.report();
        await client.stop();
      } else {
        await client.stop();
        report = { stderr: sidecar.stderrTail() };
      }
      throw new StartError(`promptd did not start: ${startFailure(error)}`, report, { cause: error });
    }
    if (result.protocol_version !== requested) {
      await client.stop();
      throw new ProtocolVersionError(requested, result.protocol_version, { stderr: sidecar.stderrTail() });
    }
    client.initializeResult = result;
    // The server's own limit, unless the host chose one: an oversized request is then refused
    // before it is sent rather than answered with an error.
    const serverLimit = result.limits?.max_message_bytes;
    if (options.maxMessageBytes === undefined && options.connection?.maxMessageBytes === undefined && typeof serverLimit === "number") {
      sidecar.connection.setMaxMessageBytes(serverLimit);
    }
    return client;
  }

  /** The sidecar's process id (undefined over plain streams). */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** The last lines of the sidecar's stderr, oldest first (empty over plain streams). */
  stderrTail(): string[] {
    return this.process?.stderrTail() ?? [];
  }

  /** See ClientHooks.onError. */
  onError(handler: (error: Error) => void): Disposable {
    return addHook(this.errorHandlers, handler);
  }

  /** See ClientHooks.onClose. */
  onClose(handler: (error: Error | undefined) => void): Disposable {
    return addHook(this.closeHandlers, handler);
  }

  /** See ClientHooks.onExit. */
  onExit(handler: (exit: ExitInfo) => void): Disposable {
    return addHook(this.exitHandlers, handler);
  }

  /** Methods the server offers, as `initialize` listed them (empty when not initialized). */
  get serverMethods(): readonly string[] {
    return this.initializeResult?.methods ?? [];
  }

  /** Typed call of a method the protocol document describes. */
  call<M extends MethodName>(method: M, params: ParamsOf<M>, options?: RequestOptions): Promise<ResultOf<M>> {
    // The result is trusted to match the protocol: the server builds both from one set of
    // models, and the shared vectors check it.
    return this.request(method, params, options) as Promise<ResultOf<M>>;
  }

  /** Untyped call, for methods newer than the generated types. */
  request(method: string, params?: unknown, options?: RequestOptions): Promise<unknown> {
    if (this.stopping) {
      return Promise.reject(new ConnectionClosedError(`${method} was not sent: the client is stopped`));
    }
    return this.connection.sendRequest(method, params, options).catch(async (error: unknown) => {
      throw await this.closedError(error);
    });
  }

  notify<N extends NotificationName>(method: N, params: Notifications[N]["params"]): Promise<void> {
    if (this.stopping) {
      return Promise.reject(new ConnectionClosedError(`${method} was not sent: the client is stopped`));
    }
    return this.connection.sendNotification(method, params);
  }

  /**
   * `event/...` notifications; with `name`, only that event. The payloads are typed from the
   * protocol (Events); an event newer than these types is passed on as it came.
   */
  onEvent<E extends EventName>(handler: (event: E, params: Events[E]) => void, name: E): Disposable;
  onEvent(handler: EventHandler): Disposable;
  onEvent(handler: (event: never, params: never) => void, name?: string): Disposable {
    const deliver = handler as (event: string, params: unknown) => void;
    return this.connection.onNotification(undefined, (params, method) => {
      if (method.startsWith(EVENT_PREFIX) && (name === undefined || name === method)) {
        deliver(method, params);
      }
    });
  }

  /**
   * Registers a provider of kind "host" with the server; only once the server accepted it does
   * this client answer `provider/produce` for it with `handler`. A refusal changes nothing.
   */
  async registerHostProvider(registration: HostProviderRegistration, handler: HostProvider, options?: RequestOptions): Promise<ResultOf<"providers/register">> {
    const name = registration.name;
    const accepted = this.call("providers/register", { ...registration, kind: "host" }, options);
    // Committed by the first reaction to the reply, so a `provider/produce` that arrives right
    // behind it (same read) waits for this instead of finding no handler.
    const committed = accepted.then(
      () => {
        this.providers.set(name, handler);
      },
      () => undefined,
    );
    this.registering.set(name, committed);
    try {
      return await accepted;
    } finally {
      if (this.registering.get(name) === committed) {
        this.registering.delete(name);
      }
    }
  }

  /** Unregisters a provider with `providers/unregister`; its local handler goes once the server accepted. */
  async unregisterHostProvider(name: string, options?: RequestOptions): Promise<ResultOf<"providers/unregister">> {
    const result = await this.call("providers/unregister", { name }, options);
    this.providers.delete(name);
    return result;
  }

  /**
   * Ordered shutdown, each step given `graceMs` (default 5000): the `shutdown` request and the
   * `exit` notification, closing stdin, SIGTERM, SIGKILL. From the moment it is called, new
   * calls fail with ConnectionClosedError, as do calls the server refuses while shutting down.
   * Without a process (a client over plain streams), `shutdown` + `exit` are sent and the
   * connection is disposed. Calling it again returns the same outcome.
   */
  async stop(options?: ShutdownOptions): Promise<ShutdownResult> {
    this.stopping = true;
    let outcome: ShutdownResult = { code: null, signal: null, step: "exit" };
    if (this.process !== undefined) {
      outcome = await this.process.shutdown(options);
    } else if (this.connection.state === "open") {
      await this.connection.sendRequest("shutdown", undefined, { timeoutMs: options?.graceMs ?? DEFAULT_GRACE_MS }).catch(() => undefined);
      await this.connection.sendNotification("exit").catch(() => undefined);
    }
    this.connection.dispose();
    this.emitClose(undefined);
    return outcome;
  }

  private async produce(params: unknown, context: HandlerContext): Promise<ProduceResult> {
    const request = produceRequest(params);
    if (request === undefined) {
      throw new ResponseError(ErrorCodes.InvalidParams, "Invalid params", { kind: "invalid_params" satisfies ErrorKind, method: PRODUCE_METHOD });
    }
    const handler = await this.handlerFor(request.provider);
    if (handler === undefined) {
      // Same code and kind the server uses for a provider name it does not know.
      throw new ResponseError(ErrorCodes.UnknownProvider, "No such host provider in this client", { kind: "unknown_provider" satisfies ErrorKind, provider: request.provider });
    }
    let result: ProduceResult;
    try {
      result = await handler(request, context);
      if (typeof result !== "object" || result === null || !(typeof result.text === "string" || result.text === null)) {
        throw new TypeError("it returned something other than {text: string | null}");
      }
    } catch (error: unknown) {
      if (error instanceof ResponseError || context.signal.aborted) {
        throw error; // a deliberate answer, or the server cancelled it (answered -32800)
      }
      // The server skips the provider for this turn ("error"); the host hears why.
      this.emitError(new HostProviderError(request.provider, error));
      throw new ResponseError(ErrorCodes.InternalError, "Host provider failed", { kind: "internal" satisfies ErrorKind, provider: request.provider });
    }
    return { text: result.text };
  }

  /** The handler for `name`, waiting for a registration the server is accepting right now. */
  private async handlerFor(name: string): Promise<HostProvider | undefined> {
    const pending = this.registering.get(name);
    if (!this.providers.has(name) && pending !== undefined) {
      await pending;
    }
    return this.providers.get(name);
  }

  /**
   * The one shape of "no answer can come": ConnectionClosedError, also for a call refused with
   * -32002 (the server is shutting down) or abandoned by `stop()`; when the sidecar died, the
   * message names its exit status and last stderr lines.
   */
  private async closedError(error: unknown): Promise<unknown> {
    if (error instanceof ResponseError && error.code === ErrorCodes.ServerShutDown) {
      return new ConnectionClosedError(`the server is shutting down and refused the request: ${error.message}`, { cause: error });
    }
    if (error instanceof ConnectionDisposedError) {
      return new ConnectionClosedError(`the client is stopped: ${error.message}`, { cause: error });
    }
    if (error instanceof ConnectionClosedError && !this.stopping && this.process !== undefined) {
      const report = await this.process.report(CRASH_REPORT_WAIT_MS);
      return new ConnectionClosedError(withReport(error.message, report), { cause: error });
    }
    return error;
  }

  private emitError(error: Error): void {
    for (const handler of this.errorHandlers) {
      try {
        handler(error);
      } catch {
        // An error hook that throws has nowhere left to report to.
      }
    }
  }

  private emitClose(error: Error | undefined): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    for (const handler of this.closeHandlers) {
      this.guard(() => handler(error));
    }
  }

  private guard(run: () => void): void {
    try {
      run();
    } catch (error: unknown) {
      this.emitError(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

function addHook<T>(set: Set<T>, handler: T | undefined): Disposable {
  if (handler !== undefined) {
    set.add(handler);
  }
  return { dispose: () => handler !== undefined && set.delete(handler) };
}

function connectionOptions(options: StartOptions): ConnectionOptions {
  return {
    ...options.connection,
    defaultTimeoutMs: options.requestTimeoutMs ?? options.connection?.defaultTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    maxMessageBytes: options.maxMessageBytes ?? options.config?.max_message_bytes ?? options.connection?.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
  };
}

/** Why `initialize` got no usable answer, for StartError's message. */
function startFailure(error: unknown): string {
  if (error instanceof ConnectionClosedError) {
    return "it closed the connection before answering initialize";
  }
  if (error instanceof RequestTimeoutError) {
    return `initialize got no answer within ${error.timeoutMs} ms`;
  }
  if (error instanceof ResponseError) {
    return `initialize was refused: ${error.message} (${error.code}${error.kind === undefined ? "" : ` ${error.kind}`})`;
  }
  return `initialize failed: ${error instanceof Error ? error.message : String(error)}`;
}

function initializeParams(options: StartOptions): InitializeParams {
  const capabilities: Capabilities = { host_providers: options.hostProviders ?? true, events: options.events ?? false };
  const params: InitializeParams = {
    protocol_version: options.protocolVersion ?? PROTOCOL_VERSION,
    client_info: options.clientInfo ?? { name: "promptd-node" },
    capabilities,
    // Offsets in results (citation/parse, reminder/parse, content/inspect) count UTF-16 code
    // units, so `text.slice(start, end)` gives the span.
    offset_unit: options.offsetUnit ?? "utf16_units",
  };
  if (options.config !== undefined) {
    params.config = options.config;
  }
  if (options.tools !== undefined) {
    params.tools = options.tools;
  }
  return params;
}

function produceRequest(params: unknown): ProduceRequest | undefined {
  if (typeof params !== "object" || params === null) {
    return undefined;
  }
  const provider: unknown = "provider" in params ? params.provider : undefined;
  const session: unknown = "session" in params ? params.session : undefined;
  const message: unknown = "user_message" in params ? params.user_message : undefined;
  if (typeof provider !== "string" || typeof message !== "string" || typeof session !== "string") {
    return undefined;
  }
  return { provider, session, user_message: message };
}
