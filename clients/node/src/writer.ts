/**
 * The write side: messages in, one line each out, through a single serialized writer. Every
 * frame is encoded whole and handed to the stream in one `write`, so two frames can never
 * interleave; back-pressure is respected by queueing until "drain". Knows nothing of ids or
 * pending requests.
 */

import type { Writable } from "node:stream";

import { ConnectionClosedError, MessageTooLargeError } from "./errors.js";
import type { Message } from "./messages.js";

interface Queued {
  data: string;
  resolve(): void;
  reject(error: Error): void;
}

export class MessageWriter {
  private readonly queue: Queued[] = [];
  private waitingForDrain = false;
  private failure: Error | undefined;

  /** `maxLineBytes`: a message whose line (without its newline) is longer is refused unsent. */
  /** `sent`, when given, sees each line (without its newline) as it is queued, in writing order. */
  constructor(
    private readonly stream: Writable,
    private maxLineBytes: number = Number.POSITIVE_INFINITY,
    private readonly sent?: (line: string) => void,
  ) {
    stream.on("drain", () => {
      this.waitingForDrain = false;
      this.pump();
    });
    // Writing to a sidecar that has exited raises EPIPE here; it must not crash the host.
    stream.on("error", (error: Error) => this.fail(new ConnectionClosedError("the output stream failed", { cause: error })));
    stream.on("close", () => this.fail(new ConnectionClosedError("the output stream closed")));
  }

  /** Changes the longest line accepted from now on (the server's limit, once `initialize` said it). */
  setMaxLineBytes(bytes: number): void {
    this.maxLineBytes = bytes;
  }

  /** True once the stream failed, closed or was ended: later writes are refused. */
  get closed(): boolean {
    return this.failure !== undefined;
  }

  /** Encodes and queues one message; resolves once the stream accepted its bytes. */
  write(message: Message): Promise<void> {
    if (this.failure !== undefined) {
      return Promise.reject(this.failure);
    }
    let data: string;
    try {
      // JSON.stringify escapes lone surrogates (well-formed JSON.stringify), so the line is
      // always valid UTF-8; it throws on BigInt and cycles, which the caller sees as a rejection.
      data = JSON.stringify(message) + "\n";
    } catch (error: unknown) {
      return Promise.reject(error instanceof Error ? error : new TypeError(String(error)));
    }
    // Cheap check first: a UTF-8 line has at most 3 bytes per UTF-16 code unit.
    if (data.length * 3 > this.maxLineBytes) {
      const bytes = Buffer.byteLength(data) - 1;
      if (bytes > this.maxLineBytes) {
        return Promise.reject(new MessageTooLargeError("method" in message ? message.method : undefined, bytes, this.maxLineBytes));
      }
    }
    this.sent?.(data.slice(0, -1));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ data, resolve, reject });
      this.pump();
    });
  }

  /** Writes what is queued, then ends the stream (closes the peer's stdin). */
  end(): Promise<void> {
    if (this.failure !== undefined) {
      return Promise.resolve();
    }
    // Ending is not a failure of what was queued: flush it past back-pressure (the stream
    // buffers it), then refuse anything new.
    this.waitingForDrain = false;
    this.pump();
    this.failure = new ConnectionClosedError("the output stream was ended");
    return new Promise<void>((resolve) => {
      this.stream.end(() => resolve());
    });
  }

  private pump(): void {
    while (!this.waitingForDrain && this.failure === undefined) {
      const item = this.queue.shift();
      if (item === undefined) {
        return;
      }
      const accepted = this.stream.write(item.data, (error?: Error | null) => {
        if (error) {
          item.reject(new ConnectionClosedError("the output stream failed", { cause: error }));
        } else {
          item.resolve();
        }
      });
      if (!accepted) {
        this.waitingForDrain = true;
      }
    }
  }

  private fail(error: Error): void {
    if (this.failure === undefined) {
      this.failure = error;
    }
    for (const item of this.queue.splice(0)) {
      item.reject(this.failure);
    }
  }
}
