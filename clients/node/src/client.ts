/**
 * PromptdClient: the typed face of the sidecar. Spawns it (process.ts), speaks to it (connection.ts),
 * adds one typed method per protocol method (generated.ts), serves `provider/produce` for host
 * providers and surfaces `event/...` notifications.
 */

import type { Connection, Disposable, HandlerContext, RequestOptions } from "./connection.js";
import { ErrorCodes, ResponseError } from "./errors.js";
import {
  GeneratedMethods,
  PROTOCOL_VERSION,
  type Capabilities,
  type InitializeParams,
  type InitializeResult,
  type MethodName,
  type NotificationName,
  type Notifications,
  type ParamsOf,
  type ResultOf,
} from "./generated.js";
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, SidecarProcess, type ShutdownOptions, type ShutdownResult, type SpawnOptions } from "./process.js";

export const PRODUCE_METHOD = "provider/produce";
export const EVENT_PREFIX = "event/";
// Same code and kind the server uses for a provider name it does not know.
const UNKNOWN_PROVIDER = { code: -32041, kind: "unknown_provider" } as const;

/** What the server asks a host provider for, once per turn. */
export interface ProduceRequest {
  provider: string;
  session: string | null;
  user_message: string;
}

/** A host provider's answer; `text: null` means nothing this turn. */
export interface ProduceResult {
  text: string | null;
}

export type HostProvider = (request: ProduceRequest, context: HandlerContext) => ProduceResult | Promise<ProduceResult>;

export type EventHandler = (event: string, params: unknown) => void;

/**
 * How a host provider is registered with `providers/register`: its `kind` is always "host", and
 * the fields of the other kinds (text, path, argv, max_bytes) do not apply.
 */
export type HostProviderRegistration = Omit<ParamsOf<"providers/register">, "kind" | "text" | "path" | "argv" | "max_bytes">;

export interface StartOptions extends SpawnOptions {
  /** Call `initialize` (default true). One-shot pipelines may skip it, as the server allows. */
  initialize?: boolean;
  clientInfo?: { name: string; version?: string };
  /** Event notifications wanted: true for all, or names such as "event/gate_fired". */
  events?: boolean | string[];
  /** Declare `host_providers` even before any provider is added (default: true). */
  hostProviders?: boolean;
  /** Merged over the server's configuration (same shape as promptd.toml). */
  config?: Record<string, unknown>;
  tools?: InitializeParams["tools"];
  protocolVersion?: string;
}

export class PromptdClient extends GeneratedMethods {
  private readonly providers = new Map<string, HostProvider>();
  /** The `initialize` answer, when `start` called it. */
  initializeResult: InitializeResult | undefined;

  /**
   * Over an existing connection (any pair of streams); `process`, when given, is what `stop`
   * ends. Most callers use `PromptdClient.start` instead.
   */
  constructor(
    readonly connection: Connection,
    readonly process?: SidecarProcess,
  ) {
    super();
    connection.onRequest(PRODUCE_METHOD, (params, context) => this.produce(params, context));
  }

  /** Spawns `promptd serve` and, unless told otherwise, initializes it. */
  static async start(options: StartOptions = {}): Promise<PromptdClient> {
    const sidecar = await SidecarProcess.spawn(options);
    const client = new PromptdClient(sidecar.connection, sidecar);
    if (options.initialize ?? true) {
      try {
        client.initializeResult = await client.initialize(initializeParams(options));
      } catch (error: unknown) {
        await client.stop();
        throw error;
      }
    }
    return client;
  }

  /** Methods the server offers, as `initialize` listed them (empty when not initialized). */
  get serverMethods(): readonly string[] {
    return this.initializeResult?.methods ?? [];
  }

  /** Typed call of a method the protocol document describes. */
  call<M extends MethodName>(method: M, params: ParamsOf<M>, options?: RequestOptions): Promise<ResultOf<M>> {
    // The result is trusted to match the protocol: the server builds both from one set of
    // models, and the shared vectors check it.
    return this.connection.sendRequest(method, params, options) as Promise<ResultOf<M>>;
  }

  /** Untyped call, for methods newer than the generated types. */
  request(method: string, params?: unknown, options?: RequestOptions): Promise<unknown> {
    return this.connection.sendRequest(method, params, options);
  }

  notify<N extends NotificationName>(method: N, params: Notifications[N]["params"]): Promise<void> {
    return this.connection.sendNotification(method, params);
  }

  /** `event/...` notifications; with `name`, only that event. */
  onEvent(handler: EventHandler, name?: string): Disposable {
    return this.connection.onNotification(undefined, (params, method) => {
      if (method.startsWith(EVENT_PREFIX) && (name === undefined || name === method)) {
        handler(method, params);
      }
    });
  }

  /** Answers `provider/produce` for the provider `name` (registered with the server separately). */
  hostProvider(name: string, handler: HostProvider): Disposable {
    this.providers.set(name, handler);
    return { dispose: () => this.providers.get(name) === handler && this.providers.delete(name) };
  }

  /** Adds the local handler, then registers the provider with the server as kind "host". */
  async registerHostProvider(registration: HostProviderRegistration, handler: HostProvider, options?: RequestOptions): Promise<ResultOf<"providers/register">> {
    const local = this.hostProvider(registration.name, handler);
    try {
      return await this.call("providers/register", { ...registration, kind: "host" }, options);
    } catch (error: unknown) {
      local.dispose();
      throw error;
    }
  }

  /**
   * Ordered shutdown: `shutdown` + `exit`, then closing stdin, SIGTERM, SIGKILL. Without a
   * process (a client over plain streams), `shutdown` + `exit` are sent and the connection is
   * disposed.
   */
  async stop(options?: ShutdownOptions): Promise<ShutdownResult> {
    if (this.process !== undefined) {
      return this.process.shutdown(options);
    }
    if (this.connection.state === "open") {
      await this.connection.sendRequest("shutdown", undefined, { timeoutMs: options?.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS }).catch(() => undefined);
      await this.connection.sendNotification("exit").catch(() => undefined);
      this.connection.dispose();
    }
    return { code: null, signal: null, step: "exit" };
  }

  private async produce(params: unknown, context: HandlerContext): Promise<ProduceResult> {
    const request = produceRequest(params);
    if (request === undefined) {
      throw new ResponseError(ErrorCodes.InvalidParams, "Invalid params", { kind: "invalid_params", method: PRODUCE_METHOD });
    }
    const handler = this.providers.get(request.provider);
    if (handler === undefined) {
      throw new ResponseError(UNKNOWN_PROVIDER.code, "No such host provider in this client", { kind: UNKNOWN_PROVIDER.kind, provider: request.provider });
    }
    const result = await handler(request, context);
    if (typeof result !== "object" || result === null || !(typeof result.text === "string" || result.text === null)) {
      throw new TypeError(`host provider ${request.provider} returned something other than {text: string | null}`);
    }
    return { text: result.text };
  }
}

function initializeParams(options: StartOptions): InitializeParams {
  const capabilities: Capabilities = { host_providers: options.hostProviders ?? true, events: options.events ?? false };
  const params: InitializeParams = {
    protocol_version: options.protocolVersion ?? PROTOCOL_VERSION,
    client_info: options.clientInfo ?? { name: "promptd-node" },
    capabilities,
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
  const session: unknown = "session" in params ? params.session : null;
  const message: unknown = "user_message" in params ? params.user_message : undefined;
  if (typeof provider !== "string" || typeof message !== "string" || !(typeof session === "string" || session === null)) {
    return undefined;
  }
  return { provider, session, user_message: message };
}
