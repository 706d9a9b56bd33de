"""docs/quickstart-python.md, run as written: the blocks between its quickstart markers, in
order, in an empty directory against the tests' server. A `python` block is written to the
file its first line names (`# tasks.py`); a `sh` block runs in bash, and one that "runs
until Ctrl-C" gets a SIGINT once the jobs are done, as a user would send it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

from helpers import wait_for

from runlater import Client, JobState, NotFoundError

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGE = REPO_ROOT / "docs" / "quickstart-python.md"


def _blocks() -> list[tuple[str, str]]:
    section = re.search(
        r"<!-- quickstart:start -->(.*?)<!-- quickstart:end -->", PAGE.read_text(), re.DOTALL
    )
    assert section, f"{PAGE} has no block between the quickstart markers"
    return re.findall(r"```(\w+)\n(.*?)```", section.group(1), re.DOTALL)


def _drop_queue(client: Client) -> None:
    try:
        client.delete_queue("emails")
    except NotFoundError:
        pass


def _done(client: Client) -> bool:
    counts = [client.count_jobs("emails", state=s) for s in (JobState.SUCCEEDED, JobState.FAILED)]
    return counts == [2, 1]


def test_the_python_quick_start_runs_as_written(
    tmp_path: Path, server_url: str, client: Client
) -> None:
    # A user's shell: no PYTHONPATH or virtualenv of the tests.
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "RUNLATER_URL": server_url,
        "RUNLATER_HOME": str(REPO_ROOT),
    }
    outputs: list[str] = []
    _drop_queue(client)  # a server named by RUNLATER_URL may have run it before
    try:
        for lang, text in _blocks():
            if lang == "python":
                name = re.match(r"# (\S+)\n", text)
                assert name, f"a python block must start with # FILENAME:\n{text}"
                (tmp_path / name.group(1)).write_text(text)
            elif lang == "sh" and "runs until Ctrl-C" in text:
                outputs.append(_run_until_done(text, tmp_path, env, client))
            elif lang == "sh":
                done = subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", text],
                    cwd=tmp_path,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                assert done.returncode == 0, done.stderr
                outputs.append(done.stdout)
            else:
                raise AssertionError(f"a block of an unknown kind ({lang}) in {PAGE.name}")
        _, producer, worker = outputs
        enqueued = re.findall(r"^enqueued (\S+) for (\S+)$", producer, re.MULTILINE)
        assert [to for _, to in enqueued] == [
            "ada@example.com",
            "grace@example.com",
            "linus@example.invalid",
        ]
        assert "sending 'Welcome' to ada@example.com" in worker
        jobs = client.get_jobs([job_id for job_id, _ in enqueued]).jobs
        assert [(j.state, j.custom_status) for j in jobs] == [
            (JobState.SUCCEEDED, "sent to ada@example.com"),
            (JobState.SUCCEEDED, "sent to grace@example.com"),
            (JobState.FAILED, "cannot deliver to linus@example.invalid"),
        ]
    finally:
        _drop_queue(client)


def _run_until_done(script: str, cwd: Path, env: dict[str, str], client: Client) -> str:
    """Runs a block that serves until Ctrl-C; SIGINT once the three jobs are done."""
    proc = subprocess.Popen(
        ["bash", "-c", script],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        wait_for(lambda: _done(client), timeout=60)
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, out
    return out
