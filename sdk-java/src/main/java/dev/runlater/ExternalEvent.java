package dev.runlater;

import java.util.Objects;

/**
 * An event for an external input of a workflow instance.
 *
 * @param input the external input's name
 * @param customStatus carried as the triggering event's custom status (null: none)
 * @param result carried as the triggering event's result (null: none), at most {@link
 *     Workflow#MAX_RESULT_BYTES}
 */
public record ExternalEvent(String input, String customStatus, byte[] result) {
  /** Refuses a result over 4 KiB here, naming the bound, before the server would. */
  public ExternalEvent {
    Objects.requireNonNull(input, "input");
    customStatus = customStatus == null ? "" : customStatus;
    result = Workflow.checkResult(result, "event for input " + input + ": result");
  }

  /** An event with no payload. */
  public static ExternalEvent of(String input) {
    return new ExternalEvent(input, "", null);
  }
}
