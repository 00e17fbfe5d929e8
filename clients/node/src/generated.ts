// DO NOT EDIT: generated from protocol/openrpc.json by `make -C clients/node generate` (scripts/generate.mjs).

import type { RequestOptions } from "./connection.js";

/** The protocol version of the document these types were generated from. */
export const PROTOCOL_VERSION = "2026-11-01";

export interface CancelParams {
  id: string | number;
}

export interface Capabilities {
  /** @default false */
  host_providers?: boolean;
  /** @default false */
  events?: boolean | string[];
}

export interface ClientInfo {
  name: string;
  version?: string | null;
}

/** The OpenRPC document (see protocol/openrpc.json). */
export interface DiscoverResult {
  openrpc: string;
  [key: string]: unknown;
}

/** No fields: the params of parameterless methods and the result `{}`. */
export type Empty = Record<string, never>;

export interface InitializeParams {
  protocol_version?: string | null;
  client_info?: ClientInfo | null;
  capabilities?: Capabilities;
  config?: Record<string, unknown>;
  tools?: Tools | null;
}

export interface InitializeResult {
  protocol_version: string;
  server_info: ServerInfo;
  methods: string[];
}

export interface KeyInfoModel {
  key: string;
  purpose: string;
  introduced_in: string;
}

export interface KeysResult {
  keys: KeyInfoModel[];
}

export interface ReminderPart {
  key: string;
  body: string;
}

export interface ServerInfo {
  name: string;
  version: string;
}

/** The host's tool set by kind: `{"read": "read_file", "plan": "todo_write"}`. */
export interface Tools {
  by_kind?: Record<string, string>;
}

export interface WrapManyParams {
  parts: ReminderPart[];
  /** @default false */
  nonce?: boolean;
}

export interface WrapParams {
  /** Reminder key, [A-Za-z0-9._-]+ */
  key: string;
  body: string;
  /** @default false */
  nonce?: boolean;
}

export interface WrapResult {
  text: string;
}

/** Every request method: its params (by name) and its result. */
export interface Methods {
  "initialize": {
    params: {
      protocol_version?: string | null;
      client_info?: ClientInfo | null;
      capabilities?: Capabilities;
      config?: Record<string, unknown>;
      tools?: Tools | null;
    };
    result: InitializeResult;
  };
  "reminder/keys": {
    params: Record<string, never>;
    result: KeysResult;
  };
  "reminder/wrap": {
    params: {
      /** Reminder key, [A-Za-z0-9._-]+ */
      key: string;
      body: string;
      /** @default false */
      nonce?: boolean;
    };
    result: WrapResult;
  };
  "reminder/wrap_many": {
    params: {
      parts: ReminderPart[];
      /** @default false */
      nonce?: boolean;
    };
    result: WrapResult;
  };
  "rpc.discover": {
    params: Record<string, never>;
    result: DiscoverResult;
  };
  "shutdown": {
    params: Record<string, never>;
    result: Empty;
  };
}

/** Notifications the client sends (never answered). */
export interface Notifications {
  "$/cancelRequest": {
    params: {
      id: string | number;
    };
  };
  "exit": {
    params: Record<string, never>;
  };
}

export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
export type ResultOf<M extends MethodName> = Methods[M]["result"];
export type NotificationName = keyof Notifications;

export const METHOD_NAMES: readonly MethodName[] = ["initialize","reminder/keys","reminder/wrap","reminder/wrap_many","rpc.discover","shutdown"];

/** One typed wrapper per request method; PromptdClient supplies `call`. */
export abstract class GeneratedMethods {
  abstract call<M extends MethodName>(method: M, params: ParamsOf<M>, options?: RequestOptions): Promise<ResultOf<M>>;

  /** `initialize`: Negotiates the protocol version, records client facts, applies config overrides. */
  initialize(params: ParamsOf<"initialize"> = {}, options?: RequestOptions): Promise<ResultOf<"initialize">> {
    return this.call("initialize", params, options);
  }

  /** `reminder/keys`: The reserved-key registry, plus keys the host added. */
  reminderKeys(params: ParamsOf<"reminder/keys"> = {}, options?: RequestOptions): Promise<ResultOf<"reminder/keys">> {
    return this.call("reminder/keys", params, options);
  }

  /** `reminder/wrap`: Wraps one body in a keyed <system-reminder> block (seed 000). */
  reminderWrap(params: ParamsOf<"reminder/wrap">, options?: RequestOptions): Promise<ResultOf<"reminder/wrap">> {
    return this.call("reminder/wrap", params, options);
  }

  /** `reminder/wrap_many`: Wraps ordered parts and joins the blocks with one blank line. */
  reminderWrapMany(params: ParamsOf<"reminder/wrap_many">, options?: RequestOptions): Promise<ResultOf<"reminder/wrap_many">> {
    return this.call("reminder/wrap_many", params, options);
  }

  /** `rpc.discover`: The OpenRPC document of this server. */
  rpcDiscover(params: ParamsOf<"rpc.discover"> = {}, options?: RequestOptions): Promise<ResultOf<"rpc.discover">> {
    return this.call("rpc.discover", params, options);
  }

  /** `shutdown`: Drains in-flight work; later requests are refused with -32002. */
  shutdown(params: ParamsOf<"shutdown"> = {}, options?: RequestOptions): Promise<ResultOf<"shutdown">> {
    return this.call("shutdown", params, options);
  }
}
