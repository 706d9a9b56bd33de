package dev.runlater;

/**
 * Options of {@link RunlaterClient#scanJobs(JobFilter, ScanOptions)} and {@link
 * RunlaterClient#scanAllJobs(JobFilter, ScanOptions)}. Build with {@link #builder()}.
 *
 * @param pageSize jobs per page, up to 1,000 (more is refused by the server); 0 means the server's
 *     default (100)
 * @param pageToken where to start: {@link JobPage#nextPageToken()} of a previous page; empty for
 *     the first page
 * @param includeBody return the jobs' bodies too (default false: bodies may be large)
 */
public record ScanOptions(int pageSize, String pageToken, boolean includeBody) {
  /**
   * Checks the page size and normalises a null token to empty.
   *
   * @throws IllegalArgumentException for a negative page size
   */
  public ScanOptions {
    Args.requireNotNegative("pageSize", pageSize);
    pageToken = pageToken == null ? "" : pageToken;
  }

  /** The first page at the server's page size, without bodies. */
  public static ScanOptions defaults() {
    return builder().build();
  }

  /** A builder at the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** This scan, from {@code pageToken} on (the same page size and bodies). */
  ScanOptions from(String pageToken) {
    return new ScanOptions(pageSize, pageToken, includeBody);
  }

  /** Builds {@link ScanOptions}. */
  public static final class Builder {
    private int pageSize;
    private String pageToken = "";
    private boolean includeBody;

    private Builder() {}

    /** Jobs per page, up to 1,000; 0: the server's default (100). */
    public Builder pageSize(int pageSize) {
      this.pageSize = pageSize;
      return this;
    }

    /** Starts at this page: {@link JobPage#nextPageToken()} of the page before. */
    public Builder pageToken(String pageToken) {
      this.pageToken = pageToken;
      return this;
    }

    /** Returns the jobs' bodies too. */
    public Builder includeBody(boolean includeBody) {
      this.includeBody = includeBody;
      return this;
    }

    /**
     * The options.
     *
     * @throws IllegalArgumentException for a negative page size
     */
    public ScanOptions build() {
      return new ScanOptions(pageSize, pageToken, includeBody);
    }
  }
}
