package dev.runlater;

import io.grpc.Status;

/**
 * The call's deadline passed before the server answered (status {@code DEADLINE_EXCEEDED}). It may
 * or may not have been applied.
 */
public final class DeadlineExceededException extends RunlaterException {
  private static final long serialVersionUID = 1L;

  /** Creates one; see {@link RunlaterException#RunlaterException}. */
  public DeadlineExceededException(
      Status.Code code, ErrorReason reason, String field, String message, Throwable cause) {
    super(code, reason, field, message, cause);
  }
}
