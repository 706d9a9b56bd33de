/**
 * The memory store's ordering-key sequences: per key, the jobs that have not ended, in
 * the order they joined (enqueue, or RetryFailedJobs rejoining at the tail). The first
 * live one is the head, the only one allowed to be claimed.
 *
 * Like the other memory indexes, entries are never removed from the middle: a member
 * that left (ended, was deleted, or rejoined further back) gets keyPos 0 or a new
 * position, and its old entry is skipped when it reaches the front. Joining and finding
 * the head are O(1) amortized.
 */

export interface SequenceMember {
  /** Position in its key's sequence while in it; 0 when in none. */
  keyPos: number;
}

interface Entry<T> {
  member: T;
  pos: number;
}

class Sequence<T extends SequenceMember> {
  private items: Array<Entry<T>> = [];
  private start = 0;

  push(entry: Entry<T>): void {
    this.items.push(entry);
  }

  /** The first live member, dropping stale entries in front of it. */
  front(): T | undefined {
    for (let e = this.items[this.start]; e; e = this.items[this.start]) {
      if (e.member.keyPos === e.pos) return e.member;
      this.start++;
    }
    this.items = [];
    this.start = 0;
    return undefined;
  }

  compact(): void {
    if (this.start > 1024 && this.start * 2 > this.items.length) {
      this.items = this.items.slice(this.start);
      this.start = 0;
    }
  }
}

export class KeySequences<T extends SequenceMember> {
  private readonly byKey = new Map<string, Sequence<T>>();

  /**
   * Appends `member` to `key`'s sequence at `pos` (greater than every position given
   * before). Returns whether the key already had a live member: then `member` waits.
   */
  join(key: string, member: T, pos: number): boolean {
    let sequence = this.byKey.get(key);
    if (!sequence) this.byKey.set(key, (sequence = new Sequence()));
    const busy = sequence.front() !== undefined;
    member.keyPos = pos;
    sequence.push({ member, pos });
    return busy;
  }

  /** The key's head: its first live member; undefined (and the key forgotten) when none is left. */
  head(key: string): T | undefined {
    const sequence = this.byKey.get(key);
    const head = sequence?.front();
    if (!head) this.byKey.delete(key);
    else sequence!.compact();
    return head;
  }
}
