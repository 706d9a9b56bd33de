package dev.runlater.worker;

/**
 * Thrown by a {@link JobHandler}: the attempt failed and the job must not be retried, whatever
 * attempts it has left (it goes to FAILED). The message goes to the job's custom status.
 */
public class DoNotRetry extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Fail for good. */
  public DoNotRetry(String message) {
    super(message);
  }

  /** Fail for good, keeping {@code cause} for logs. */
  public DoNotRetry(String message, Throwable cause) {
    super(message, cause);
  }
}
