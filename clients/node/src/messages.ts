/**
 * JSON-RPC 2.0 message shapes and the classification of decoded values. Pure functions: no I/O,
 * no streams, no timers.
 */

import type { ErrorObject } from "./errors.js";

export type Id = number | string;

export interface RequestMessage {
  jsonrpc: "2.0";
  id: Id;
  method: string;
  params?: unknown;
}

export interface NotificationMessage {
  jsonrpc: "2.0";
  method: string;
  params?: unknown;
}

export interface ResponseMessage {
  jsonrpc: "2.0";
  id: Id | null;
  result?: unknown;
  error?: ErrorObject;
}

export type Message = RequestMessage | NotificationMessage | ResponseMessage;

/** One decoded value, sorted into what the connection does with it. */
export type Incoming =
  | { type: "request"; id: Id; method: string; params: unknown }
  | { type: "notification"; method: string; params: unknown }
  | { type: "response"; id: Id | null; result: unknown; error: unknown; isError: boolean }
  | { type: "invalid"; reason: string; value: unknown };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is Id {
  return typeof value === "string" || (typeof value === "number" && Number.isInteger(value));
}

/**
 * Sorts one decoded JSON value. A batch (array) is flattened: the server answers a batch with an
 * array, and each element is handled on its own.
 */
export function classify(value: unknown): Incoming[] {
  if (Array.isArray(value)) {
    return value.flatMap((item: unknown) => (Array.isArray(item) ? [invalid("nested batch", item)] : classify(item)));
  }
  if (!isRecord(value)) {
    return [invalid("not an object", value)];
  }
  if (value["jsonrpc"] !== "2.0") {
    return [invalid("jsonrpc is not 2.0", value)];
  }
  const method = value["method"];
  const id = value["id"];
  if (typeof method === "string") {
    if (!("id" in value)) {
      return [{ type: "notification", method, params: value["params"] }];
    }
    return isId(id) ? [{ type: "request", id, method, params: value["params"] }] : [invalid("request id is not a string or integer", value)];
  }
  if ("result" in value || "error" in value) {
    if (id !== null && !isId(id)) {
      return [invalid("response id is not a string, integer or null", value)];
    }
    const isError = "error" in value && value["error"] !== undefined;
    return [{ type: "response", id, result: value["result"], error: value["error"], isError }];
  }
  return [invalid("neither a request, a notification nor a response", value)];
}

function invalid(reason: string, value: unknown): Incoming {
  return { type: "invalid", reason, value };
}
