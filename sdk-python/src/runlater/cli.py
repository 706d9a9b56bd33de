"""`runlater-worker module:attr`: imports a Worker and runs it until SIGTERM/SIGINT.

    runlater-worker myapp.tasks:app --url http://runlater:8080 --concurrency 8 --queue emails

--url (default $RUNLATER_URL), --concurrency and --queue override what the app's Worker
says (Worker.configure), so one app can be deployed as several workers.

The current directory is put on sys.path first, as uvicorn and celery do, so a module
beside the caller is found without installing it.

The API token comes from RUNLATER_TOKEN, or from the file named by --token-file (a flag
with the token itself would show it to everyone who can list processes).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import logging
import os
import sys

from ._transport import TOKEN_ENV
from .worker import Worker

URL_ENV = "RUNLATER_URL"
# The levels of the logging module, as --log-level takes them.
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


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


def _url(value: str) -> str:
    if not value.lower().startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"must be an http:// or https:// URL, not {value!r}")
    return value


def _concurrency(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {value!r}")
    return number


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runlater-worker", description=__doc__.splitlines()[0])
    parser.add_argument("app", help="the Worker to run, as module:attribute")
    parser.add_argument(
        "--url",
        type=_url,
        help=f"the server, instead of the app's (default ${URL_ENV} if set)",
    )
    parser.add_argument(
        "--concurrency",
        type=_concurrency,
        metavar="N",
        help="jobs at once per queue, for every queue (instead of the app's settings)",
    )
    parser.add_argument(
        "--queue",
        action="append",
        dest="queues",
        metavar="QUEUE",
        help="run only this queue of the app's (repeat for more; default all of them)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        type=str.lower,
        choices=LOG_LEVELS,
        help="logging level (default info)",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help=f"file holding the API token (instead of {TOKEN_ENV}), for clients the app "
        "makes without an explicit token",
    )
    args = parser.parse_args(argv)
    url, url_from = args.url, "--url"
    if url is None and os.environ.get(URL_ENV):
        url, url_from = os.environ[URL_ENV], f"${URL_ENV}"
        try:
            _url(url)
        except argparse.ArgumentTypeError as err:
            parser.error(f"{url_from} {err}")
    if args.token_file is not None:
        # Before the app is imported: its clients read the variable when they are made.
        os.environ[TOKEN_ENV] = read_token_file(args.token_file)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    worker = load_worker(args.app)
    # Each flag on its own, so that an error names the flag it came from.
    try:
        worker.configure(url=url)  # https://: reads and checks the RUNLATER_TLS_* files
    except ValueError as err:
        parser.error(f"{url_from} {url}: {err}")
    worker.configure(concurrency=args.concurrency)  # checked by _concurrency
    try:
        worker.configure(queues=args.queues)  # the app's queues are known only now
    except ValueError as err:
        parser.error(f"--queue: {err}")
    worker.run(handle_signals=True)
    if worker.abandoned_threads:
        # Blocking handlers past the grace were released to PENDING but their threads
        # cannot be interrupted; Python would wait for them at exit.
        logging.getLogger("runlater.worker").warning(
            "exiting with %d handler thread(s) still running", worker.abandoned_threads
        )
    _leave(0)
    return 0  # not reached


def _leave(code: int) -> None:
    """Exits without the interpreter's teardown, once the app's exit hooks have run.

    The worker has closed what it owns, but clients the app made at import stay open, and
    the native HTTP client under them (pyqwest's Rust runtime), torn down during the
    interpreter's finalization, now and then aborted the process (SIGABRT, no message,
    after "worker stopped": seen in CI). atexit hooks (a tracing exporter's flush, the
    logging shutdown) still run first."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
