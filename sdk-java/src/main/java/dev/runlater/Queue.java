package dev.runlater;

/**
 * A queue with its config (defaults filled in) and live stats.
 *
 * @param name the queue's name
 * @param config its settings
 * @param stats live counts
 */
public record Queue(String name, QueueConfig config, QueueStats stats) {}
