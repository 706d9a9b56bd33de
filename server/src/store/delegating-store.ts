/**
 * The Store methods, once for every store: each hands the store's context (its shards and
 * routing, or its tables in memory) and the call's parameters to the module function of the
 * same name. The in-tree stores extend this with their context and their functions, kept in
 * modules by concern (memory/, redis/, mysql/), so a store class holds no logic of its own
 * and the three do not repeat the same list of methods. A method adds one call and no await:
 * the function's promise is returned as it is.
 */
import { claimThenStart } from "./claim-start.js";
import type { Store } from "./store.js";

/** The Store methods a module function implements: all but close, which each store writes. */
type Delegated = Exclude<keyof Store, "name" | "defaultBufferSize" | "close" | "workflows" | "schedules">;

/** The module function behind each Store method: the method's parameters, after the store's context. */
export type StoreFunctions<C> = { [K in Delegated]: (ctx: C, ...p: Parameters<Store[K]>) => ReturnType<Store[K]> };

export abstract class DelegatingStore<C> implements Store {
  abstract readonly name: string;
  abstract readonly defaultBufferSize: number;
  /** What the store's module functions share; set by the store's constructor. */
  protected abstract readonly ctx: C;
  /** Whether the store's jobClaimMany hands out by itself (`start`, in the claim's round trip). */
  protected readonly claimStarts: boolean = false;

  constructor(private readonly functions: StoreFunctions<C>) {}

  // ---- broker registry

  brokerHeartbeat(p: Parameters<Store["brokerHeartbeat"]>[0]): ReturnType<Store["brokerHeartbeat"]> {
    return this.functions.brokerHeartbeat(this.ctx, p);
  }

  brokerList(p: Parameters<Store["brokerList"]>[0]): ReturnType<Store["brokerList"]> {
    return this.functions.brokerList(this.ctx, p);
  }

  brokerLeave(p: Parameters<Store["brokerLeave"]>[0]): ReturnType<Store["brokerLeave"]> {
    return this.functions.brokerLeave(this.ctx, p);
  }

  // ---- API tokens

  tokenDelete(p: Parameters<Store["tokenDelete"]>[0]): ReturnType<Store["tokenDelete"]> {
    return this.functions.tokenDelete(this.ctx, p);
  }

  tokenGet(p: Parameters<Store["tokenGet"]>[0]): ReturnType<Store["tokenGet"]> {
    return this.functions.tokenGet(this.ctx, p);
  }

  tokenInsert(p: Parameters<Store["tokenInsert"]>[0]): ReturnType<Store["tokenInsert"]> {
    return this.functions.tokenInsert(this.ctx, p);
  }

  tokenList(): ReturnType<Store["tokenList"]> {
    return this.functions.tokenList(this.ctx);
  }

  // ---- leases

  leaseAcquire(p: Parameters<Store["leaseAcquire"]>[0]): ReturnType<Store["leaseAcquire"]> {
    return this.functions.leaseAcquire(this.ctx, p);
  }

  leaseRelease(p: Parameters<Store["leaseRelease"]>[0]): ReturnType<Store["leaseRelease"]> {
    return this.functions.leaseRelease(this.ctx, p);
  }

  // ---- jobs

  jobClaimExpire(p: Parameters<Store["jobClaimExpire"]>[0]): ReturnType<Store["jobClaimExpire"]> {
    return this.functions.jobClaimExpire(this.ctx, p);
  }

  jobClaimMany(p: Parameters<Store["jobClaimMany"]>[0]): ReturnType<Store["jobClaimMany"]> {
    // A claim that hands out too: in the store's own claim where it can (claimStarts), else
    // the claim, then the start.
    if (p.start !== undefined && !this.claimStarts) {
      // (The module functions, not the methods: a store wrapping these sees one claim.)
      const own = {
        jobClaimMany: (c: typeof p) => this.functions.jobClaimMany(this.ctx, c),
        jobStartMany: (c: Parameters<Store["jobStartMany"]>[0]) => this.functions.jobStartMany(this.ctx, c),
      };
      return claimThenStart(own, { ...p, start: p.start });
    }
    return this.functions.jobClaimMany(this.ctx, p);
  }

  jobCheckpointMany(p: Parameters<Store["jobCheckpointMany"]>[0]): ReturnType<Store["jobCheckpointMany"]> {
    return this.functions.jobCheckpointMany(this.ctx, p);
  }

  jobCompleteMany(p: Parameters<Store["jobCompleteMany"]>[0]): ReturnType<Store["jobCompleteMany"]> {
    return this.functions.jobCompleteMany(this.ctx, p);
  }

  jobCount(p: Parameters<Store["jobCount"]>[0]): ReturnType<Store["jobCount"]> {
    return this.functions.jobCount(this.ctx, p);
  }

  jobDeleteFinished(p: Parameters<Store["jobDeleteFinished"]>[0]): ReturnType<Store["jobDeleteFinished"]> {
    return this.functions.jobDeleteFinished(this.ctx, p);
  }

  jobDeleteMany(p: Parameters<Store["jobDeleteMany"]>[0]): ReturnType<Store["jobDeleteMany"]> {
    return this.functions.jobDeleteMany(this.ctx, p);
  }

  jobFailMany(p: Parameters<Store["jobFailMany"]>[0]): ReturnType<Store["jobFailMany"]> {
    return this.functions.jobFailMany(this.ctx, p);
  }

  jobGetMany(p: Parameters<Store["jobGetMany"]>[0]): ReturnType<Store["jobGetMany"]> {
    return this.functions.jobGetMany(this.ctx, p);
  }

  jobInsertMany(p: Parameters<Store["jobInsertMany"]>[0]): ReturnType<Store["jobInsertMany"]> {
    return this.functions.jobInsertMany(this.ctx, p);
  }

  jobNextDueAt(p: Parameters<Store["jobNextDueAt"]>[0]): ReturnType<Store["jobNextDueAt"]> {
    return this.functions.jobNextDueAt(this.ctx, p);
  }

  jobPeekMany(p: Parameters<Store["jobPeekMany"]>[0]): ReturnType<Store["jobPeekMany"]> {
    return this.functions.jobPeekMany(this.ctx, p);
  }

  jobReleaseBuffered(p: Parameters<Store["jobReleaseBuffered"]>[0]): ReturnType<Store["jobReleaseBuffered"]> {
    return this.functions.jobReleaseBuffered(this.ctx, p);
  }

  jobRetryFailed(p: Parameters<Store["jobRetryFailed"]>[0]): ReturnType<Store["jobRetryFailed"]> {
    return this.functions.jobRetryFailed(this.ctx, p);
  }

  jobScan(p: Parameters<Store["jobScan"]>[0]): ReturnType<Store["jobScan"]> {
    return this.functions.jobScan(this.ctx, p);
  }

  jobStartMany(p: Parameters<Store["jobStartMany"]>[0]): ReturnType<Store["jobStartMany"]> {
    return this.functions.jobStartMany(this.ctx, p);
  }

  // ---- queues

  queueCreate(p: Parameters<Store["queueCreate"]>[0]): ReturnType<Store["queueCreate"]> {
    return this.functions.queueCreate(this.ctx, p);
  }

  queueDelete(p: Parameters<Store["queueDelete"]>[0]): ReturnType<Store["queueDelete"]> {
    return this.functions.queueDelete(this.ctx, p);
  }

  queueGet(p: Parameters<Store["queueGet"]>[0]): ReturnType<Store["queueGet"]> {
    return this.functions.queueGet(this.ctx, p);
  }

  queueList(): ReturnType<Store["queueList"]> {
    return this.functions.queueList(this.ctx);
  }

  queueStats(p: Parameters<Store["queueStats"]>[0]): ReturnType<Store["queueStats"]> {
    return this.functions.queueStats(this.ctx, p);
  }

  queueUpdate(p: Parameters<Store["queueUpdate"]>[0]): ReturnType<Store["queueUpdate"]> {
    return this.functions.queueUpdate(this.ctx, p);
  }

  abstract close(): Promise<void>;
}
