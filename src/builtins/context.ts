import type { Principal } from '../call/principal.js';
import type { Workspace } from './workspace.js';

/** What every built-in tool factory receives: how to find the caller's workspace. */
export interface BuiltinToolDeps {
  workspaceFor(principal: Principal): Promise<Workspace>;
}
