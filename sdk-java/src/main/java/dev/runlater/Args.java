package dev.runlater;

/** Checks of arguments, with messages that name the argument. */
final class Args {
  private Args() {}

  static void requireNotNegative(String name, int value) {
    if (value < 0) {
      throw new IllegalArgumentException(name + " must not be negative, got " + value);
    }
  }
}
