"""The README's example (examples/hello_worker.py) runs as documented."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "hello_worker.py"


def test_hello_worker_example_runs(server_url: str) -> None:
    queue = f"t_example_{secrets.token_hex(4)}"
    env = dict(os.environ, RUNLATER_URL=server_url, HELLO_QUEUE=queue)
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "hello, flaky (attempt 2)" in out.stdout
    assert out.stdout.count("SUCCEEDED") == 3
