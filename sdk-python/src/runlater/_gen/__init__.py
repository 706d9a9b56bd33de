"""Generated from proto/runlater/v1 by scripts/generate.sh. Do not edit."""
