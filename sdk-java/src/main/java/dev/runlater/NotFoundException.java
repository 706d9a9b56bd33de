package dev.runlater;

import io.grpc.Status;

/**
 * The named queue (or another resource) does not exist: reason {@link ErrorReason#QUEUE_NOT_FOUND},
 * or status {@code NOT_FOUND} without a reason.
 */
public final class NotFoundException extends RunlaterException {
  private static final long serialVersionUID = 1L;

  /** Creates one; see {@link RunlaterException#RunlaterException}. */
  public NotFoundException(
      Status.Code code, ErrorReason reason, String field, String message, Throwable cause) {
    super(code, reason, field, message, cause);
  }
}
