package dev.runlater.worker;

/**
 * A queue's concurrency slots. A slot is free, spoken for (a Dequeue in flight asked for it, or a
 * stream credit granted for it is not used yet), or held by a job until its handler is done. Taking
 * slots before asking and giving back those the answer did not fill keeps every puller together
 * from asking for more jobs than there is room for.
 */
final class Slots {
  private final int total;
  private int free; // guarded by this
  private boolean stopped; // guarded by this

  Slots(int total) {
    this.total = total;
    this.free = total;
  }

  int total() {
    return total;
  }

  /** Waits until a slot is free, then takes up to {@code max} free ones; 0 once stopped. */
  synchronized int await(int max) throws InterruptedException {
    while (free == 0 && !stopped) {
      wait();
    }
    if (stopped) {
      return 0;
    }
    int n = Math.min(max, free);
    free -= n;
    return n;
  }

  /** Takes every free slot if at least {@code min} are free (none otherwise); 0 once stopped. */
  synchronized int takeAll(int min) {
    if (stopped || free < min) {
      return 0;
    }
    int n = free;
    free = 0;
    return n;
  }

  /** Gives back {@code n} slots (jobs finished, or an answer came back short). */
  synchronized void giveBack(int n) {
    if (n > 0) {
      free += n;
      notifyAll();
    }
  }

  /** Nothing more is taken; wakes those waiting. */
  synchronized void stop() {
    stopped = true;
    notifyAll();
  }
}
