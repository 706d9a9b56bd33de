/**
 * Who the live brokers are, read from the store's registry every `ttlMs / 3`; a broker
 * node also heartbeats its own entry on the same beat. Listeners hear about every change
 * of the set (a broker joined, left or expired), which is when partitions move.
 *
 * A broker always counts itself as live while it runs, even if its own heartbeat could
 * not be written: correctness never rests on the view (leases fence every write), and a
 * broker cut off from the store cannot renew its leases anyway.
 */
import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import type { BrokerEntry, Store } from "../store/store.js";
import { assignQueue } from "./assignment.js";

export interface MembershipOptions {
  store: Store;
  clock: Clock;
  log: Logger;
  /** This node's broker id when it runs a broker; undefined for a frontend. */
  selfId?: string;
  /** Registration lifetime; refreshed every ttlMs / 3. */
  ttlMs: number;
}

export class Membership {
  private live: BrokerEntry[] = [];
  private ids: string[] = [];
  private readonly listeners: Array<() => void> = [];
  /** Per queue, for the partition count it was computed for: the owner of each partition, and those owners. */
  private readonly assignments = new Map<string, { count: number; owners: string[]; brokers: BrokerEntry[] }>();
  private cancelTimer: (() => void) | undefined;
  private stopped = false;
  private self: { id: string; url: string } | undefined;
  private lastRefreshAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: MembershipOptions) {}

  /** Registers (for a broker, reachable at `url`) and reads the registry once, then keeps both fresh. */
  async start(url: string): Promise<void> {
    if (this.selfId !== undefined) {
      this.self = { id: this.selfId, url };
      this.setLive([{ ...this.self, expiresAt: Number.POSITIVE_INFINITY }]);
    }
    await this.refresh();
    const beat = () => {
      void this.refresh().finally(() => {
        if (!this.stopped) this.cancelTimer = this.o.clock.setTimer(this.o.ttlMs / 3, beat);
      });
    };
    this.cancelTimer = this.o.clock.setTimer(this.o.ttlMs / 3, beat);
  }

  /** Stops heartbeating and, for a broker, leaves the registry so others take over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    if (this.self)
      await this.o.store
        .brokerLeave({ id: this.self.id })
        .catch((err) => this.o.log.warn({ err }, "could not leave the broker registry"));
  }

  get selfId(): string | undefined {
    return this.o.selfId;
  }

  brokers(): readonly BrokerEntry[] {
    return this.live;
  }

  /** The broker that should own `queue`/`partition` (of `count`), or undefined when none is live. */
  ownerOf(queue: string, partition: number, count: number): BrokerEntry | undefined {
    const id = this.owners(queue, count)[partition];
    return this.live.find((b) => b.id === id);
  }

  /** The live brokers that should own at least one partition of `queue` (out of `count`). */
  ownersOf(queue: string, count: number): readonly BrokerEntry[] {
    this.owners(queue, count);
    return this.assignments.get(queue)!.brokers;
  }

  /**
   * Whether this broker is the one that runs cluster-wide upkeep (claim-timeout sweep,
   * retention GC): the live broker with the smallest id. When it dies the next one takes
   * over at the next registry read after its registration expires.
   */
  leads(): boolean {
    return this.self !== undefined && this.ids[0] === this.self.id;
  }

  /** The id of the broker that runs cluster-wide upkeep (see leads()); undefined when none is live. */
  leaderId(): string | undefined {
    return this.ids[0];
  }

  /** Whether this node's broker should own the partition (asked on every Dequeue: cached until the set changes). */
  owns(queue: string, partition: number, count: number): boolean {
    return this.self !== undefined && this.owners(queue, count)[partition] === this.self.id;
  }

  private owners(queue: string, count: number): string[] {
    const cached = this.assignments.get(queue);
    if (cached && cached.count === count) return cached.owners;
    const owners = assignQueue(this.ids, queue, count);
    const ids = new Set(owners);
    this.assignments.set(queue, { count, owners, brokers: this.live.filter((b) => ids.has(b.id)) });
    return owners;
  }

  /**
   * Reads the registry now, unless it was read in the last 250 ms: a node that finds no
   * broker (just started, or all were restarting) looks again before answering NO_BROKER.
   */
  async refreshNow(): Promise<void> {
    if (this.o.clock.now() - this.lastRefreshAt < 250) return;
    await this.refresh();
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private async refresh(): Promise<void> {
    const now = this.o.clock.now();
    this.lastRefreshAt = now;
    try {
      if (this.self)
        await this.o.store.brokerHeartbeat({ id: this.self.id, url: this.self.url, ttlMs: this.o.ttlMs, now });
      const listed = await this.o.store.brokerList({ now });
      const self = this.self;
      this.setLive(self && !listed.some((b) => b.id === self.id) ? [...listed, { ...self, expiresAt: now }] : listed);
    } catch (err) {
      this.o.log.warn({ err }, "broker registry unreachable; keeping the last known brokers");
    }
  }

  private setLive(list: BrokerEntry[]): void {
    const ids = list.map((b) => b.id).sort();
    const changed = ids.length !== this.ids.length || ids.some((id, i) => id !== this.ids[i]);
    this.live = list;
    if (!changed) return;
    const before = this.ids;
    this.ids = ids;
    this.assignments.clear();
    this.o.log.info({ brokers: list.map((b) => ({ id: b.id, url: b.url })), before }, "brokers changed");
    for (const listener of this.listeners) listener();
  }
}
