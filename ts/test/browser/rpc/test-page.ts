// The page side for worker-rpc-browser.test.ts: only the page half of the RPC (no WASM).
import { ApiProblem } from '../../../src/browser/api.js';
import { startModuleWorker } from '../../../src/browser/trusted-worker.js';
import { WorkerClient } from '../../../src/browser/worker-client.js';
import { IkiError } from '../../../src/errors.js';

const exported = { ApiProblem, IkiError, WorkerClient, startModuleWorker };
export type RpcPage = typeof exported;
(globalThis as unknown as { rpc: RpcPage }).rpc = exported;
document.title = 'rpc ready';
