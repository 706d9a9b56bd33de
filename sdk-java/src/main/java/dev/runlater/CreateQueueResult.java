package dev.runlater;

/**
 * What {@link RunlaterClient#createQueue} returned.
 *
 * @param queue the queue (the existing one if it already existed)
 * @param created false if the queue already existed (its config was left unchanged)
 */
public record CreateQueueResult(Queue queue, boolean created) {}
