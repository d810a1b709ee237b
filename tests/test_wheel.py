"""Install labelaudit as a user would, and use it.

The sdist is built, the wheel is built from the sdist (``python -m build``, as ``make wheel``),
and the wheel is installed with its dependencies into a fresh virtual environment: torch first,
pinned as the Makefile pins it (the CPU wheel; anything else pulls CUDA packages), then
``labelaudit[review]``. From a folder outside the repository, so that the source tree cannot
be imported by accident, the installed command then runs ``--help``, a small scan and the
review app, whose pages and static files must come from the installed package: a file left
out of the package data fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

# A fresh environment with torch, transformers, pandas... installed from the registry (or
# pip's cache): minutes, not seconds; `make test-fast` leaves it out.
pytestmark = [pytest.mark.heavy, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "labelaudit"
INSTALL_TIMEOUT = 1500  # seconds for one pip install, with a cold cache


def _torch_pin() -> str:
    """The torch requirement the Makefile installs first (``torch==X``)."""
    found = re.search(r"pip install -q (torch==\S+)", (ROOT / "Makefile").read_text())
    assert found, "the Makefile no longer installs a pinned torch first (pip install -q torch==X)"
    return found.group(1)


def _clean_env(venv: Path | None = None) -> dict[str, str]:
    """This environment without anything that points Python at the source tree or .venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}}
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["HF_HUB_OFFLINE"] = env["TRANSFORMERS_OFFLINE"] = "1"  # the hub is never needed here
    return env


def _run(args: list[str | Path], *, cwd: Path, env: dict[str, str],
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a command; on a non-zero exit, fail with the command and the end of its output."""
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"`{' '.join(str(a) for a in args)}` exited {done.returncode}\n"
        f"--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-5000:]}")
    return done


# What a copy of the tree leaves out where git cannot say what is ignored: builds, caches,
# environments and setuptools' egg-info, whose stale SOURCES.txt would put files in the sdist
# that the package data no longer names (so a wheel built here would hide the omission).
_NOT_COPIED = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info",
                                     "__pycache__", "*.pyc", ".*cache", ".hypothesis")


def _copy_tree(target: Path) -> Path:
    """The source tree as a fresh clone has it (tracked and new files, nothing ignored)."""
    listed = None
    if (ROOT / ".git").exists() and shutil.which("git"):
        done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                               "--exclude-standard"], cwd=ROOT, capture_output=True)
        if done.returncode == 0:
            listed = [name for name in done.stdout.decode().split("\0") if name]
    if listed is None:
        shutil.copytree(ROOT, target, ignore=_NOT_COPIED)
        return target
    for name in listed:
        source = ROOT / name
        if source.is_file() and "__pycache__" not in source.parts:  # not deleted since
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _package_files(tree: Path) -> set[str]:
    """Every file of the package in a source tree, as ``labelaudit/...``."""
    package = tree / "src" / "labelaudit"
    return {path.relative_to(package.parent).as_posix() for path in package.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts
            and path.suffix not in {".pyc", ".pyo"}}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel built from it (``python -m build``, as ``make wheel``), from a
    clean copy of the source tree, into a folder of this run's own; nothing is written in the
    repository."""
    pytest.importorskip("build", reason="building the wheel needs `build` (the dev extra)")
    tree = _copy_tree(tmp_path_factory.mktemp("tree") / "labelaudit")
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", out, tree], cwd=tree, env=_clean_env(),
         timeout=INSTALL_TIMEOUT)
    sdists, wheels = sorted(out.glob("labelaudit-*.tar.gz")), sorted(out.glob("labelaudit-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, f"expected one sdist and one wheel in {out}"
    return {"sdist": sdists[0], "wheel": wheels[0], "tree": tree}


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory) -> Path:
    """A fresh virtual environment holding the wheel with the [review] extra, as a user
    installs it: pip upgraded, the pinned torch first, then the wheel and its dependencies.
    About 2 GB, left to pytest's clean-up of old temporary folders (removing it here took
    longer than installing it on a busy disk)."""
    folder = tmp_path_factory.mktemp("wheel-venv") / "venv"
    env = _clean_env()
    here = folder.parent
    _run([sys.executable, "-m", "venv", folder], cwd=here, env=env, timeout=300)
    pip = [folder / "bin" / "python", "-m", "pip", "install", "-q"]
    _run([*pip, "--upgrade", "pip"], cwd=here, env=env, timeout=INSTALL_TIMEOUT)
    _run([*pip, _torch_pin()], cwd=here, env=env, timeout=INSTALL_TIMEOUT)
    _run([*pip, f"{dist['wheel']}[review]"], cwd=here, env=env, timeout=INSTALL_TIMEOUT)
    return folder


@pytest.fixture
def workdir(tmp_path) -> Path:
    """A folder outside the repository to run the installed command in."""
    assert ROOT not in tmp_path.parents, "the test's folder must lie outside the repository"
    return tmp_path


def _data(path: Path) -> pd.DataFrame:
    """40 short texts of two topics; rows 0, 1 and 2 carry the other topic's label."""
    rng = np.random.default_rng(0)
    words = {"sport": ["match", "goal", "team", "coach", "league", "score", "cup", "player"],
             "food": ["pasta", "sauce", "cook", "recipe", "bake", "spicy", "soup", "chef"]}
    labels = np.array(["sport", "food"] * 20)
    texts = [" ".join(rng.choice(words[c], size=4, replace=False)) for c in labels]
    given = labels.copy()
    given[:3] = np.where(labels[:3] == "sport", "food", "sport")
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(40)], "text": texts, "label": given})
    frame.to_csv(path, index=False)
    return frame


def _scan(venv: Path, workdir: Path) -> Path:
    _data(workdir / "data.csv")
    _run([venv / "bin" / "labelaudit", "scan", "data.csv", "--scorers", "tfidf", "--quiet",
          "--out", "issues.csv"], cwd=workdir, env=_clean_env(venv), timeout=600)
    return workdir / "issues.csv"


def test_the_sdist_and_the_wheel_hold_every_file_of_the_package(dist):
    expected = _package_files(dist["tree"])
    assert "labelaudit/review/static/review.css" in expected  # the walk found the tree
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        in_wheel = {n for n in wheel.namelist() if n.startswith("labelaudit/")}
    with tarfile.open(dist["sdist"]) as sdist:
        in_sdist = {n.split("/src/", 1)[1] for n in sdist.getnames() if "/src/labelaudit/" in n}
    how = "add them to [tool.setuptools.package-data] in pyproject.toml"
    assert not expected - in_sdist, f"missing from the sdist ({how}): {sorted(expected - in_sdist)}"
    assert not expected - in_wheel, f"missing from the wheel ({how}): {sorted(expected - in_wheel)}"
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        entry_points = next(n for n in wheel.namelist()
                            if n.endswith(".dist-info/entry_points.txt"))
        assert "labelaudit = labelaudit.cli:main" in wheel.read(entry_points).decode()


def test_the_installed_command_is_the_wheel_in_the_new_environment(venv, workdir):
    env = _clean_env(venv)
    where = _run([venv / "bin" / "python", "-c", "import labelaudit; print(labelaudit.__file__)"],
                 cwd=workdir, env=env).stdout.strip()
    assert Path(where).resolve().is_relative_to(venv.resolve()), (
        f"labelaudit was imported from {where}, not from the new environment {venv}")
    assert not Path(where).resolve().is_relative_to(ROOT), where
    shown = _run([venv / "bin" / "labelaudit", "--help"], cwd=workdir, env=env).stdout
    for command in ("scan", "evaluate", "review", "train"):
        assert re.search(rf"^\s+{command}\s", shown, re.M), f"{command!r} not in --help:\n{shown}"
    # help.toml (package data) holds the commands' texts: a subcommand's help reads it
    scan_help = _run([venv / "bin" / "labelaudit", "scan", "--help"], cwd=workdir, env=env).stdout
    assert "--scorers" in scan_help and "out-of-sample" in scan_help
    as_module = _run([venv / "bin" / "python", "-m", "labelaudit", "--help"], cwd=workdir,
                     env=env).stdout
    assert "review" in as_module


def test_a_small_scan_runs_from_the_installed_command(venv, workdir):
    issues = pd.read_csv(_scan(venv, workdir))
    assert len(issues) == 40
    assert {"id", "text", "label", "suggested_label", "rank", "flagged"} <= set(issues.columns)
    assert sorted(issues["rank"]) == list(range(1, 41))
    assert set(issues["suggested_label"]) <= {"sport", "food"}
    top = set(issues.sort_values("rank")["id"].head(10))
    assert len(top & {"r0", "r1", "r2"}) >= 2, issues.sort_values("rank").head(10)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_served(client, process: subprocess.Popen, log: Path,
                       timeout: float = 60.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"`labelaudit review serve` exited:\n{log.read_text()[-3000:]}")
        try:
            if client.get("/").status_code == 401:  # served, and no one signed in
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the review server did not answer within {timeout} s:\n"
                         f"{log.read_text()[-3000:]}")


def test_the_review_app_serves_its_pages_and_static_files_from_the_package(venv, workdir):
    httpx = pytest.importorskip("httpx")
    env = _clean_env(venv)
    labelaudit = venv / "bin" / "labelaudit"
    _scan(venv, workdir)
    port = _free_port()
    _run([labelaudit, "review", "init", "issues.csv", "--db", "review.sqlite", "--top", "4",
          "--reviewers", "1", "--quiet"], cwd=workdir, env=env)
    links = {}
    for name, extra in (("alice", []), ("boss", ["--admin"])):
        printed = _run([labelaudit, "review", "invite", "--db", "review.sqlite", "--name", name,
                        "--port", str(port), *extra], cwd=workdir, env=env)
        found = re.search(r"token=([\w-]+)", printed.stdout + printed.stderr)
        assert found, f"no link in the invite's output:\n{printed.stdout}\n{printed.stderr}"
        links[name] = found.group(1)
    log = workdir / "serve.log"
    with open(log, "wb") as err:
        server = subprocess.Popen([str(labelaudit), "review", "serve", "--db", "review.sqlite",
                                   "--port", str(port)], cwd=workdir, env=env,
                                  stdout=subprocess.DEVNULL, stderr=err)
    try:
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, timeout=10.0) as anonymous:
            _wait_until_served(anonymous, server, log)
            refused = anonymous.get("/")  # message.html, through base.html
            assert '<link rel="stylesheet" href="/static/review.css">' in refused.text
            # every static file the source tree has, byte for byte from the installed package
            folder = PACKAGE / "review" / "static"
            static = sorted(p for p in folder.rglob("*") if p.is_file())
            assert static, "no static files in the source tree"
            for path in static:
                name = path.relative_to(folder).as_posix()
                got = anonymous.get(f"/static/{name}")
                assert got.status_code == 200, (
                    f"/static/{name} answered {got.status_code}: the installed package "
                    "lacks it (is it in [tool.setuptools.package-data]?)")
                assert got.content == path.read_bytes(), f"/static/{name} differs"
        with httpx.Client(base_url=url, timeout=10.0) as alice:
            _sign_in(alice, links["alice"], "alice")
            item = alice.get("/")  # item.html with _signout.html
            assert item.status_code == 200, item.text[:2000]
            assert 'id="answer-form"' in item.text and 'id="progress"' in item.text
        with httpx.Client(base_url=url, timeout=10.0) as boss:
            _sign_in(boss, links["boss"], "boss")
            admin = boss.get("/admin")
            assert admin.status_code == 200, admin.text[:2000]
            assert "/static/review.js" in admin.text
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=15)


def _sign_in(client, token: str, who: str) -> None:
    landing = client.get("/login", params={"token": token})  # login.html
    assert landing.status_code == 200, landing.text[:2000]
    assert f'<strong id="login-name">{who}</strong>' in landing.text
    csrf = re.search(r'id="login-form".*?name="csrf" value="([0-9a-f]+)"', landing.text, re.S)
    assert csrf, landing.text[:2000]
    signed = client.post("/login", data={"token": token, "csrf": csrf.group(1)})
    assert signed.status_code == 303, signed.text[:2000]

