package dev.runlater.worker;

import dev.runlater.DequeuedJob;
import dev.runlater.RunlaterClient;
import java.time.Duration;
import java.util.function.Consumer;

/** Takes a queue's jobs from the server: {@link Poller} (Dequeue calls) or {@link StreamPuller}. */
interface Puller {
  /**
   * What a puller works with.
   *
   * @param batchSize most jobs one Dequeue asks for; the stream grants credits once half of it is
   *     free
   * @param dispatch runs a job handed out; its slot stays held until the handler is done
   */
  record Setup(
      RunlaterClient client,
      String queue,
      String workerId,
      Slots slots,
      AckBatcher acks,
      int batchSize,
      Consumer<DequeuedJob> dispatch) {}

  void start();

  /** A slot came back or an ack was added: a chance to ask for more or send acks. */
  void poke();

  /** Stops taking jobs; what is already on its way is still dispatched (and then released). */
  void stop();

  /** Waits up to {@code timeout} for the puller's threads to end. */
  void await(Duration timeout) throws InterruptedException;
}
