/**
 * The engine's admin calls on jobs: lookups, scans and counts (their answers bounded in
 * body bytes), and the bulk retry and delete of a queue's jobs (announcing what they made due).
 */
import type { Clock } from "../domain/clock.js";
import { answerTooLarge, batchTooLarge, invalidArgument } from "../domain/errors.js";
import { parseJobId } from "../domain/job-id.js";
import type { JobRecord } from "../domain/job-record.js";
import { limits } from "../domain/limits.js";
import type { Store } from "../store/store.js";
import type { Dispatch } from "./dispatch.js";
import type { FilterInput } from "./inputs.js";
import { decodeCursor, encodeCursor } from "./page-token.js";
import type { QueueCache } from "./queue-cache.js";
import { boundedLimit, checkAttempts, checkPriority, checkRunAfter, fitting, toFilter } from "./request-checks.js";

export class JobAdmin {
  constructor(private readonly o: { store: Store; clock: Clock; broker: Dispatch; queues: QueueCache }) {}

  /**
   * Without `includeBody` the bodies are not read (they come back empty); with it they
   * must fit one answer (limits.answerBodyBytesMax) unless one job is asked for. When the
   * largest bodies any queue accepts could pass that, their sizes are read first, so a
   * lookup refused for its size never reads the bodies: the server's memory per call stays
   * within the bound. (A single job, or a few, is one read.)
   */
  async getJobs(requested: string[], includeBody = true): Promise<Array<JobRecord | undefined>> {
    if (requested.length > limits.getJobsMax) throw batchTooLarge("job_ids", requested.length, limits.getJobsMax);
    // A string that is not a job id names no job: the store is not asked about it (MySQL
    // refuses to compare non-ASCII text with its ASCII id column).
    const ids = requested.filter((id) => parseJobId(id) !== undefined);
    if (includeBody && ids.length * limits.maxBodyBytesMax > limits.answerBodyBytesMax) {
      const sized = await this.o.store.jobGetMany({ ids, bodies: false });
      const bytes = sized.reduce((n, job) => n + (job?.bodySize ?? 0), 0);
      if (bytes > limits.answerBodyBytesMax) throw answerTooLarge("job_ids", bytes, limits.answerBodyBytesMax);
    }
    const found = ids.length === 0 ? [] : await this.o.store.jobGetMany({ ids, bodies: includeBody });
    if (ids.length === requested.length) return found;
    const byId = new Map(ids.map((id, i) => [id, found[i]]));
    return requested.map((id) => byId.get(id));
  }

  /**
   * With `includeBody`, a page ends early where its bodies would pass
   * limits.answerBodyBytesMax (it holds at least one job). The page is scanned without
   * bodies and cut by their sizes; then only the page's bodies are read.
   */
  async scanJobs(p: {
    queue: string;
    filter: FilterInput;
    limit: number;
    pageToken: string;
    includeBody?: boolean;
  }): Promise<{ jobs: JobRecord[]; nextPageToken: string }> {
    await this.o.queues.get(p.queue, "queue");
    const limit = boundedLimit(p.limit, limits.scanLimitDefault, limits.scanLimitMax, "limit");
    const cursor = p.pageToken === "" ? undefined : decodeCursor(p.pageToken);
    const jobs = await this.o.store.jobScan({
      queue: p.queue,
      filter: toFilter(p.filter),
      limit: limit + 1,
      cursor,
      bodies: false,
      now: this.o.clock.now(),
    });
    const end = Math.min(
      limit,
      p.includeBody
        ? fitting(
            jobs.map((job) => job.bodySize ?? 0),
            limits.answerBodyBytesMax,
          )
        : jobs.length,
    );
    const page = jobs.slice(0, end);
    const last = page[page.length - 1];
    const nextPageToken = jobs.length > end && last ? encodeCursor({ runAfter: last.runAfter, id: last.id }) : "";
    return { jobs: p.includeBody ? await this.withBodies(page) : page, nextPageToken };
  }

  /** The jobs with their bodies read; a job deleted since it was scanned leaves the page. */
  private async withBodies(jobs: JobRecord[]): Promise<JobRecord[]> {
    if (jobs.length === 0) return jobs;
    const whole = await this.o.store.jobGetMany({ ids: jobs.map((job) => job.id), bodies: true });
    return jobs.flatMap((job, i) => {
      const found = whole[i];
      if (!found) return [];
      const { bodySize: _, ...scanned } = job;
      return [{ ...scanned, body: found.body }];
    });
  }

  async countJobs(p: { queue: string; filter: FilterInput }): Promise<number> {
    await this.o.queues.get(p.queue, "queue");
    return this.o.store.jobCount({ queue: p.queue, filter: toFilter(p.filter), now: this.o.clock.now() });
  }

  async retryFailedJobs(p: {
    queue: string;
    priority: number;
    attemptsAllowed: number;
    runAfter?: number;
    limit: number;
  }): Promise<number> {
    const { config } = await this.o.queues.get(p.queue, "queue");
    checkPriority(p.priority, config, "priority", true);
    checkAttempts(p.attemptsAllowed, "attempts_allowed");
    const now = this.o.clock.now();
    checkRunAfter(p.runAfter, now, "run_after");
    const runAfter = Math.max(now, p.runAfter ?? now);
    const count = await this.o.store.jobRetryFailed({
      queue: p.queue,
      priority: p.priority || undefined,
      attemptsAllowed: p.attemptsAllowed || config.defaultAttemptsAllowed,
      runAfter,
      limit: boundedLimit(p.limit, limits.bulkLimitDefault, limits.bulkLimitMax, "limit"),
      now,
    });
    if (count > 0) for (let i = 0; i < config.partitions; i++) this.o.broker.notify(p.queue, i, runAfter);
    return count;
  }

  async deleteJobs(p: { queue: string; filter: FilterInput; limit: number }): Promise<number> {
    const { config } = await this.o.queues.get(p.queue, "queue");
    if (!p.filter.state)
      throw invalidArgument(
        "state",
        "state is required (PENDING, RUNNING, SUCCEEDED or FAILED); to delete everything use DeleteQueue",
      );
    const limit = boundedLimit(p.limit, limits.bulkLimitDefault, limits.bulkLimitMax, "limit");
    const now = this.o.clock.now();
    const count = await this.o.store.jobDeleteMany({ queue: p.queue, filter: toFilter(p.filter), limit, now });
    // A deleted job may have been the head of its ordering key: the next one is claimable now.
    if (count > 0) for (let i = 0; i < config.partitions; i++) this.o.broker.notify(p.queue, i, now);
    return count;
  }
}
