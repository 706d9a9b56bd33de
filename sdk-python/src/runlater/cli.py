"""`runlater-worker module:attr`: imports a Worker and runs it until SIGTERM/SIGINT.

    runlater-worker myapp.tasks:app --log-level info

The current directory is put on sys.path first, as uvicorn and celery do, so a module
beside the caller is found without installing it.

The API token comes from RUNLATER_TOKEN, or from the file named by --token-file (a flag
with the token itself would show it to everyone who can list processes).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from ._transport import TOKEN_ENV
from .worker import Worker


def load_worker(target: str) -> Worker:
    """Resolves "package.module:attribute" (attribute may be dotted) to a Worker."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise SystemExit(f"runlater-worker: expected MODULE:ATTRIBUTE, got {target!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    obj: object = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, Worker):
        raise SystemExit(f"runlater-worker: {target} is a {type(obj).__name__}, not a Worker")
    return obj


def read_token_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as err:
        raise SystemExit(f"runlater-worker: --token-file {path}: {err.strerror}") from err
    except UnicodeDecodeError as err:  # its text would quote the file: no details
        raise SystemExit(f"runlater-worker: --token-file {path} is not UTF-8 text") from err
    if not token:
        raise SystemExit(f"runlater-worker: --token-file {path} is empty")
    return token


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runlater-worker", description=__doc__.splitlines()[0])
    parser.add_argument("app", help="the Worker to run, as module:attribute")
    parser.add_argument("--log-level", default="info", help="logging level (default info)")
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help=f"file holding the API token (instead of {TOKEN_ENV}), for clients the app "
        "makes without an explicit token",
    )
    args = parser.parse_args(argv)
    if args.token_file is not None:
        # Before the app is imported: its clients read the variable when they are made.
        os.environ[TOKEN_ENV] = read_token_file(args.token_file)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    worker = load_worker(args.app)
    worker.run(handle_signals=True)
    if worker.abandoned_threads:
        # Blocking handlers past the grace were released to PENDING but their threads
        # cannot be interrupted; Python would wait for them at exit, so leave now.
        logging.getLogger("runlater.worker").warning(
            "exiting with %d handler thread(s) still running", worker.abandoned_threads
        )
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
