// The SDK's stdio client transport, with the writes of one event-loop turn sent to the child together.
//
// The SDK writes each message to the child's stdin on its own, and a pipe write is a system call that
// wakes the upstream, which then reads, parses and answers one request at a time. Under concurrent load
// (many calls arriving in one poll phase) that is a syscall and an upstream wake-up per call. Here the
// first send of a turn corks stdin and a setImmediate (after the poll phase that delivered the requests)
// uncorks it, so the turn's messages leave in one writev and the upstream reads them in one go. A lone
// call waits at most until the end of the current loop turn.
import type { ChildProcess } from 'node:child_process';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export class CoalescingStdioClientTransport extends StdioClientTransport {
  private corked = false;

  override send(message: JSONRPCMessage): Promise<void> {
    if (!this.corked) {
      // The child's stdin is the SDK's private field; the stdio tests against real servers guard this.
      const stdin = (this as unknown as { _process?: ChildProcess })._process?.stdin;
      if (stdin && !stdin.destroyed) {
        this.corked = true;
        stdin.cork();
        setImmediate(() => {
          this.corked = false;
          stdin.uncork();
        });
      }
    }
    return super.send(message);
  }
}
