/**
 * An in-memory peer for connection tests: two PassThrough streams stand in for the sidecar's
 * stdin and stdout, and the test reads what the client wrote and scripts what comes back.
 */

import { PassThrough } from "node:stream";

import { Connection, type ConnectionOptions } from "../../src/index.js";

export type Frame = Record<string, unknown>;

export class FakePeer {
  /** What the client writes (the sidecar's stdin). */
  readonly fromClient = new PassThrough();
  /** What the client reads (the sidecar's stdout). */
  readonly toClient = new PassThrough();
  readonly received: Frame[] = [];
  private buffer = "";
  private waiters: Array<{ match: (frame: Frame) => boolean; resolve: (frame: Frame) => void }> = [];

  constructor() {
    this.fromClient.setEncoding("utf8");
    this.fromClient.on("data", (chunk: string) => {
      this.buffer += chunk;
      let index = this.buffer.indexOf("\n");
      while (index >= 0) {
        const line = this.buffer.slice(0, index);
        this.buffer = this.buffer.slice(index + 1);
        this.accept(JSON.parse(line) as Frame);
        index = this.buffer.indexOf("\n");
      }
    });
  }

  connect(options: ConnectionOptions = {}): Connection {
    return new Connection(this.toClient, this.fromClient, options);
  }

  /** The next frame (already received or still to come) that matches. */
  next(match: (frame: Frame) => boolean = () => true): Promise<Frame> {
    const index = this.received.findIndex(match);
    if (index >= 0) {
      const [frame] = this.received.splice(index, 1);
      return Promise.resolve(frame as Frame);
    }
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** The next request or notification for `method`. */
  nextCall(method: string): Promise<Frame> {
    return this.next((frame) => frame["method"] === method);
  }

  send(frame: unknown): void {
    this.toClient.write(JSON.stringify(frame) + "\n");
  }

  sendRaw(text: string): void {
    this.toClient.write(text);
  }

  reply(id: unknown, result: unknown): void {
    this.send({ jsonrpc: "2.0", id, result });
  }

  fail(id: unknown, code: number, message: string, data?: unknown): void {
    this.send({ jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } });
  }

  /** The sidecar's stdout ends, as when it exits. */
  hangUp(): void {
    this.toClient.end();
  }

  private accept(frame: Frame): void {
    const index = this.waiters.findIndex((waiter) => waiter.match(frame));
    if (index >= 0) {
      const [waiter] = this.waiters.splice(index, 1);
      waiter?.resolve(frame);
      return;
    }
    this.received.push(frame);
  }
}
