package dev.runlater;

import io.grpc.Status;

/**
 * The request was malformed: reasons {@link ErrorReason#INVALID_QUEUE_NAME}, {@link
 * ErrorReason#INVALID_PRIORITY} and {@link ErrorReason#INVALID_ARGUMENT}, or status {@code
 * INVALID_ARGUMENT} / {@code OUT_OF_RANGE} without a reason. {@link #field()} names the field at
 * fault. Sending it again will fail again.
 */
public final class InvalidArgumentException extends RunlaterException {
  private static final long serialVersionUID = 1L;

  /** Creates one; see {@link RunlaterException#RunlaterException}. */
  public InvalidArgumentException(
      Status.Code code, ErrorReason reason, String field, String message, Throwable cause) {
    super(code, reason, field, message, cause);
  }
}
