/**
 * Body bytes held in all of one broker's partition buffers, against the broker-wide bound
 * (`--buffer-bytes-total`). Buffers count what they hold; a refill reserves the room it
 * may claim until its jobs are in its buffer, so refills of several partitions running at
 * once cannot each take the same room.
 */
export class BufferMemory {
  /** Body bytes in the buffers (PartitionBuffer keeps this up to date). */
  held = 0;
  /** Jobs in the buffers (likewise; for metrics). */
  jobs = 0;
  private reserved = 0;

  constructor(private readonly limit: number | undefined) {}

  /** Room left under the bound, never negative; undefined: no bound. */
  room(): number | undefined {
    return this.limit === undefined ? undefined : Math.max(0, this.limit - this.held - this.reserved);
  }

  /**
   * Reserves the room one refill may claim: at most `atMost` (the partition's own room,
   * undefined: none) and what is left under the bound. Give it back with `release` once the
   * claimed jobs are in a buffer (or the claim failed).
   */
  reserve(atMost: number | undefined): number | undefined {
    const room = this.room();
    if (room === undefined) return atMost;
    const bytes = atMost === undefined ? room : Math.min(atMost, room);
    this.reserved += bytes;
    return bytes;
  }

  release(reserved: number | undefined): void {
    if (this.limit !== undefined && reserved !== undefined) this.reserved -= reserved;
  }
}
