package dev.runlater;

import io.grpc.Status;

/**
 * What the SDK throws for a failed call. It carries the status code and, when the server attached a
 * {@code runlater.v1.ErrorInfo} detail, its reason and field, so callers can branch without parsing
 * messages.
 *
 * <p>Each failure comes as the subclass of its family, so a {@code catch} can pick one: {@link
 * NotFoundException}, {@link InvalidArgumentException}, {@link ResourceExhaustedException}, {@link
 * UnavailableException}, {@link DeadlineExceededException}. The reason decides the family when
 * there is one; without one, the status code does. Other failures (internal errors, cancellation,
 * ...) are a plain {@code RunlaterException}.
 */
public class RunlaterException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status.Code code;
  private final ErrorReason reason;
  private final String field;
  private final String description;

  /**
   * Creates an exception.
   *
   * @param code the gRPC status code (Connect codes map one to one)
   * @param reason the ErrorInfo reason, {@link ErrorReason#UNSPECIFIED} if none
   * @param field the ErrorInfo field at fault, empty if none
   * @param message the server's message
   * @param cause the underlying transport exception, may be null
   */
  public RunlaterException(
      Status.Code code, ErrorReason reason, String field, String message, Throwable cause) {
    super(code + ": " + message, cause);
    this.code = code;
    this.reason = reason;
    this.field = field;
    this.description = message;
  }

  /** The message without the code in front: the server's, or the transport's. */
  public String description() {
    return description;
  }

  /**
   * The same failure (same family, code, reason and field) with {@code context} put in front of its
   * message, e.g. which queue a worker could not start on. This exception is its cause.
   */
  public RunlaterException withContext(String context) {
    return Errors.of(code, reason, field, context + ": " + description, this);
  }

  /** The status code, e.g. {@code NOT_FOUND} or {@code INVALID_ARGUMENT}. */
  public Status.Code code() {
    return code;
  }

  /** The ErrorInfo reason, or {@link ErrorReason#UNSPECIFIED} when the server sent none. */
  public ErrorReason reason() {
    return reason;
  }

  /** The field at fault (proto name, e.g. {@code jobs[3].priority}), or empty. */
  public String field() {
    return field;
  }
}
