"""The package as users get it.

`python -m build` makes an sdist and a wheel (ci.sh builds them once and names the folder
in RUNLATER_DIST; without it this module builds its own). The wheel, installed into a
clean venv with the lowest dependency versions pyproject.toml allows (so the lower bounds
stay tested; the test venv itself has the newest), runs a worker that takes and acks a job
from a real server. The README names the same dependency ranges as the package metadata.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import signal
import subprocess
import sys
import tarfile
import textwrap
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import QueueFactory, wait_for

from runlater import Client, Job, JobState

SDK = Path(__file__).resolve().parents[1]
VERSION = importlib.metadata.version("runlater")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("RUNLATER_DIST"):
        return Path(os.environ["RUNLATER_DIST"])
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(SDK)], check=True)
    return out


def _requirements() -> dict[str, tuple[str, str]]:
    """The installed package's dependencies (its wheel's Requires-Dist, extras left out) as
    name -> (lower bound, upper bound): each must have both."""
    ranges = {}
    for requirement in importlib.metadata.requires("runlater") or []:
        if "extra ==" in requirement:
            continue
        name = re.split(r"[<>=!~;\s]", requirement, maxsplit=1)[0]
        specifiers = requirement[len(name) :]
        bounds = dict(re.findall(r"(>=|<)([^,]+)", specifiers))
        assert set(bounds) == {">=", "<"}, f"{requirement}: a lower and an upper bound"
        ranges[name] = (bounds[">="], bounds["<"])
    return ranges


def test_build_makes_an_sdist_and_a_wheel(dist: Path) -> None:
    sdist = dist / f"runlater-{VERSION}.tar.gz"
    wheel = dist / f"runlater-{VERSION}-py3-none-any.whl"
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "src/runlater/__init__.py", "tests/conftest.py"} <= names
    with zipfile.ZipFile(wheel) as whl:
        files = set(whl.namelist())
        info = f"runlater-{VERSION}.dist-info"
        metadata = whl.read(f"{info}/METADATA").decode()
        entry_points = whl.read(f"{info}/entry_points.txt").decode()
    assert {"runlater/py.typed", "runlater/_gen/v1/job_pb2.py", "runlater/_task.py"} <= files
    assert "runlater-worker = runlater.cli:main" in entry_points
    assert sorted(re.findall(r"^Requires-Dist: (.+)$", metadata, re.MULTILINE)) == sorted(
        importlib.metadata.requires("runlater") or []
    )
    assert "pydantic" not in _requirements()  # optional, never required


def test_the_readme_names_the_dependency_ranges_of_the_package() -> None:
    readme = (SDK / "README.md").read_text()
    for name, (lower, upper) in _requirements().items():
        assert f"`{name}>={lower},<{upper}`" in readme


@pytest.fixture(scope="module")
def clean_venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with only the wheel and its dependencies at their lowest allowed versions."""
    home = tmp_path_factory.mktemp("venv")
    venv.create(home, with_pip=True)
    lowest = home / "lowest.txt"
    pins = [f"{name}=={lower}" for name, (lower, _) in _requirements().items()]
    lowest.write_text("\n".join(pins) + "\n")
    wheel = dist / f"runlater-{VERSION}-py3-none-any.whl"
    pip = [str(home / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "--quiet", "-c", str(lowest), str(wheel)], check=True)
    frozen = subprocess.run([*pip, "freeze"], check=True, capture_output=True, text=True).stdout
    for pin in pins:  # the constraints held: each dependency at its lower bound
        assert pin.lower() in frozen.lower().replace("_", "-"), frozen
    return home


APP = """
    from runlater import Worker, task

    app = Worker("http://127.0.0.1:9")  # the server comes from RUNLATER_URL

    @task("{queue}")
    def greet(name: str) -> str:
        return f"hello {{name}}"

    app.register_task(greet)
"""


@pytest.fixture
def app_dir(tmp_path: Path, make_queue: QueueFactory) -> Iterator[tuple[Path, str]]:
    queue = make_queue()
    (tmp_path / "greeter.py").write_text(textwrap.dedent(APP.format(queue=queue)))
    yield tmp_path, queue


def test_the_wheel_in_a_clean_venv_runs_a_worker_that_acks_a_job(
    clean_venv: Path, app_dir: tuple[Path, str], server_url: str, client: Client
) -> None:
    cwd, queue = app_dir
    job_id = client.enqueue(queue, {"name": "ada"})
    env = {"PATH": os.environ["PATH"], "RUNLATER_URL": server_url}  # no PYTHONPATH, no src/
    proc = subprocess.Popen(
        [str(clean_venv / "bin" / "runlater-worker"), "greeter:app"],
        cwd=cwd,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        job = wait_for(lambda: _succeeded(client, job_id), timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert job.custom_status == "hello ada"
    assert proc.returncode == 0, stderr
    assert str(clean_venv) in _module_path(clean_venv)


def _succeeded(client: Client, job_id: str) -> Job | None:
    job = client.get_job(job_id)
    return job if job is not None and job.state is JobState.SUCCEEDED else None


def _module_path(home: Path) -> str:
    """Where the clean venv imports runlater from (its site-packages, not src/)."""
    code = "import runlater, sys; print(runlater.__file__); assert 'pydantic' not in sys.modules"
    return subprocess.run(
        [str(home / "bin" / "python"), "-c", code], check=True, capture_output=True, text=True
    ).stdout
