"""Shared fixtures. Real datasets are found through RECPRIVACY_DATA; with
RECPRIVACY_REQUIRE_DATA=1 (as in CI) a missing dataset fails the test instead of skipping.

OpenMP threads wait passively (``OMP_WAIT_POLICY=PASSIVE``, unless the environment sets it):
set here, before anything imports PyTorch, so its OpenMP runtime reads it at start-up, and
inherited by the processes a test starts (Flower SuperNodes, Ray workers). With the default
policy an idle intra-op thread spins while it waits for the next parallel region; on a 2-core
machine shared with other processes that spinning burned ~9x the CPU of the work itself (the
SASRec unit fixture: 20 CPU s with spinning, 2.3 CPU s passive). The thread count and how work
is split are unchanged, so the results are bitwise the same (checked on that fixture's scores).

Ray's workers run at the same priority as the test processes (``RAY_worker_niceness=0``, unless the
environment sets it): Ray starts them at nice 15 so that its driver stays responsive, but in the suite
the drivers are xdist workers that wait for them while two other workers keep both cores busy at nice 0.
Starved, Flower's simulation actor took 118 s of wall time for 14 CPU s (a three-round test that takes
a few seconds alone)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("RAY_worker_niceness", "0")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # the workers are the suite's parallelism: each computes on one thread unless the environment
    # says otherwise (two threads per worker on two cores made one DIPSGNN test take 342 s instead
    # of 140 s; the golden records are the same on one thread)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("RECPRIVACY_TRAIN_THREADS", "1")


#: the test files that run on a local Ray instance (a test asking for ``local_ray``, or marked ``ray``: Flower's
#: simulation engine starts its own). ``make test`` hands them to one worker as one unit of work, run one after
#: another (``pytest_xdist_make_scheduler``): the ``local_ray`` tests share one instance, and Ray's clusters do
#: not compete (spread over the workers, the suite started Ray eleven times, and instances started together
#: slowed each other down up to threefold). A Ray test in a file not listed here is a usage error.
RAY_FILES = frozenset({
    "tests/unit/test_kit_executor.py", "tests/integration/test_audit_executor.py", "tests/integration/test_cli_engine.py",
    "tests/integration/test_dipsgnn_golden.py", "tests/integration/test_exposure_kit.py",
    "tests/integration/test_federated_flower.py", "tests/integration/test_federated_kit.py",
    "tests/integration/test_matrix_resume.py", "tests/integration/test_membership_golden.py",
    "tests/integration/test_upcsdg_kit.py",
})  # fmt: skip
_ROOT = Path(__file__).resolve().parents[1]


def _file(item: pytest.Item) -> str:
    return item.path.relative_to(_ROOT).as_posix()


def _starts_its_own_ray(item: pytest.Item) -> bool:
    """Marked ``ray`` without asking for ``local_ray``: the test's run starts Ray and shuts it down."""
    return item.get_closest_marker("ray") is not None and "local_ray" not in item.fixturenames


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files holding a ``slow`` test first, each in collection order: ``make test`` hands
    whole files to its workers in this order (``--dist loadfile --no-loadscope-reorder``), so
    the long files start at once and the short ones fill in around them, instead of a long file
    starting last and running alone at the end. Tests that start a Ray instance of their own go
    last (``RAY_FILES``: the shared instance stays up until they run)."""
    stray = [item.nodeid for item in items if ("local_ray" in item.fixturenames or item.get_closest_marker("ray"))
             and _file(item) not in RAY_FILES]  # fmt: skip
    if stray:
        raise pytest.UsageError(f"{stray[0]} runs on Ray: add its file to RAY_FILES in tests/conftest.py")
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: (item.path not in slow, _starts_its_own_ray(item)))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which answers for every --dist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with the files of ``RAY_FILES`` as one unit of work. (pytest-xdist's
    ``xdist_group`` mark would do it, but its ``loadgroup`` renames the tests' node ids, which
    pytest 9 no longer lets a plugin do: the mark has no effect.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesAndRay(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = super()._split_scope(nodeid)
            return "Ray" if file in RAY_FILES else file

    return FilesAndRay(config, log)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per core this process may use, plus one. The Flower and Ray
    tests spend most of their time waiting on the processes they start (a SuperNode polls for
    messages every 3 s), and the extra worker runs other tests meanwhile. (Two extra workers
    were slower: 10 min 38 s against 9 min 8 s, the Ray clusters competing.)"""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


@pytest.fixture
def local_ray():
    """A local Ray instance of two workers, shared by the tests of this process that run one after
    another (``RAY_FILES``): the first test that asks starts it and the next ones reuse it (a start costs
    about 7 CPU s with its workers' imports), and it stops after the last of them (``pytest_runtest_teardown``):
    idle, its daemons and workers still take about 2.3 CPU s a minute, and the suite runs for ten. A run
    that shuts Ray down (Flower's simulation engine does) leaves the next test to start it again."""
    ray = pytest.importorskip("ray")  # the optional 'ray' extra (installed in the test environment)
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    return ray


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the shared local Ray instance (``local_ray``) when the next test this process runs is not
    in ``RAY_FILES``, starts a Ray instance of its own, or there is none queued yet."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return
    if nextitem is None or _file(nextitem) not in RAY_FILES or _starts_its_own_ray(nextitem):
        ray.shutdown()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop a local Ray instance this process still runs (``local_ray``)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


#: ``RECPRIVACY_TEST_CPU=PREFIX`` (``benchmarks/suite_time.py`` sets it): each test process writes the CPU
#: seconds of every test file it ran to ``PREFIX.<worker>.json``
_TEST_CPU = os.environ.get("RECPRIVACY_TEST_CPU")
_cpu_by_file: dict[str, dict[str, float]] = {}


def _cpu_seconds() -> float:
    """User and system CPU of this process, the children it has waited for, and the processes below
    it (``_Descendants``: Ray's daemons and workers, Flower's SuperLink and SuperNodes)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + _descendants.cpu()


class _Descendants:
    """CPU seconds of the processes below this one, read with psutil once a second (a thread
    started with the measurement) and at each call: the live ones' (with the children they have
    waited for), plus what was last seen of those that left the tree unreaped by a process in it
    (Ray's workers, orphaned when ``ray.shutdown`` kills their raylet; their last second is lost).
    One reaped by this process is in ``RUSAGE_CHILDREN``, one reaped by a live descendant in that
    one's own count."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[int, float]] = {}  # pid -> (parent, CPU seconds) at the last look
        self.gone = 0.0
        self.lock = threading.Lock()

    def start(self) -> None:
        threading.Thread(target=self._watch, daemon=True, name="descendants-cpu").start()

    def _watch(self) -> None:
        while True:
            self.cpu()
            time.sleep(1.0)

    def cpu(self) -> float:
        with self.lock:
            root, now = os.getpid(), self._tree(os.getpid())
            for pid, (parent, cpu) in self.seen.items():
                if pid not in now and parent != root and parent not in now:
                    self.gone += cpu
            self.seen = now
            return self.gone + sum(cpu for _, cpu in now.values())

    @staticmethod
    def _tree(root: int) -> dict[int, tuple[int, float]]:
        """pid -> (parent, user + system CPU with the children it waited for) of every live process below ``root``."""
        import psutil  # Flower's deployment code uses it too

        tree = {}
        for proc in psutil.Process(root).children(recursive=True):
            try:
                with proc.oneshot():
                    t = proc.cpu_times()
                    tree[proc.pid] = (proc.ppid(), t.user + t.system + t.children_user + t.children_system)
            except psutil.Error:  # ended while listed
                continue
        return tree


_descendants = _Descendants()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """With ``RECPRIVACY_TEST_CPU``: add a test's CPU (setup, call and teardown, so a file's module
    fixtures count for its file; a session fixture for the first file that asks) to its file's. A
    worker runs one test at a time, so its process tree's CPU is the test's (the daemons it started
    included, ``_cpu_seconds``)."""
    if not _TEST_CPU:
        yield
        return
    cpu, wall = _cpu_seconds(), time.perf_counter()
    yield
    entry = _cpu_by_file.setdefault(item.nodeid.split("::")[0], {"cpu_seconds": 0.0, "wall_seconds": 0.0, "tests": 0})
    entry["cpu_seconds"] += _cpu_seconds() - cpu
    entry["wall_seconds"] += time.perf_counter() - wall
    entry["tests"] += 1


class _WriteTestCpu:
    @staticmethod
    def pytest_sessionfinish(session: pytest.Session) -> None:
        """Write this process's per-file CPU (``RECPRIVACY_TEST_CPU``)."""
        if _cpu_by_file:
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            Path(f"{_TEST_CPU}.{worker}.json").write_text(json.dumps(_cpu_by_file, indent=1))


def pytest_configure(config: pytest.Config) -> None:
    if _TEST_CPU:
        config.pluginmanager.register(_WriteTestCpu(), "recprivacy-test-cpu")
        _descendants.start()


def _data_root() -> Path | None:
    env = os.environ.get("RECPRIVACY_DATA")
    if env:
        return Path(env)
    guess = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    return guess if guess.is_dir() else None


@pytest.fixture(scope="session")
def data_root() -> Path:
    """Folder holding the real datasets (``ml-100k/``, ``ml-1m/``, ...)."""
    root = _data_root()
    if root is None or not root.is_dir():
        msg = f"real datasets not found (RECPRIVACY_DATA={os.environ.get('RECPRIVACY_DATA')!r})"
        if os.environ.get("RECPRIVACY_REQUIRE_DATA") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return root


@pytest.fixture(scope="session")
def dataset_dir(data_root: Path):
    """``dataset_dir("ml-100k")`` -> the folder, failing/skipping as data_root does."""

    def get(name: str) -> Path:
        path = data_root / name
        if not path.is_dir():
            msg = f"dataset folder {path} is missing"
            if os.environ.get("RECPRIVACY_REQUIRE_DATA") == "1":
                pytest.fail(msg)
            pytest.skip(msg)
        return path

    return get


@pytest.fixture(autouse=True)
def _quiet_progress(monkeypatch):
    """No progress lines on stderr in tests (so one-line error checks see one line); a test
    of progress output removes ``RECPRIVACY_QUIET`` itself."""
    monkeypatch.setenv("RECPRIVACY_QUIET", "1")


@pytest.fixture(scope="session")
def benchmark_script():
    """``benchmark_script("federated_quality")`` -> the module of ``benchmarks/<name>.py`` (the scripts
    are not a package; ``benchmarks/`` goes on ``sys.path`` as when a script runs, for ``record``)."""
    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    if str(folder) not in sys.path:
        sys.path.append(str(folder))

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


GOLDEN = Path(__file__).parent / "unit" / "golden"
#: how far a measured float may lie from the recorded one (absolute): the runs are seeded, so
#: only the last bits of a reordered floating-point sum may move
FLOAT_TOLERANCE = 1e-12
#: the parts of a difference's path the message names (below them, list indices and keys)
LEVELS = ("part", "field", "key")


def is_wall_clock(name: str) -> bool:
    """Whether a table column or a metric measures the machine, not the method: it names
    seconds (``seconds``, ``fit seconds (median)``, ``DIPSGNN/seconds_per_epoch``,
    ``round_seconds_median/apm/d=8``) or ends in a duration or rate in seconds (``fit s``,
    ``train pairs/s``)."""
    return "seconds" in name or name.endswith((" s", "/s"))


def measured_numbers(results: Any) -> dict[str, Any]:
    """What a run of a study measured, as JSON values (NaN stays a float): seeds, noise,
    metrics, every table with its caption, section titles and texts, figure names. Wall-clock
    measures are left out: ``timings``, metrics and table columns that ``is_wall_clock``."""
    tables = {}
    for name, table in results.tables.items():
        keep = [i for i, column in enumerate(table.columns) if not is_wall_clock(column)]
        tables[name] = {"columns": [table.columns[i] for i in keep], "caption": table.caption,
                        "rows": [[row[i] for i in keep] for row in table.rows]}  # fmt: skip
    numbers = {"seeds": results.seeds, "noise": results.noise,
               "metrics": {k: v for k, v in results.metrics.items() if not is_wall_clock(k)},
               "tables": tables, "sections": [[s.title, s.text] for s in results.sections], "figures": sorted(results.figures)}  # fmt: skip
    return json.loads(json.dumps(numbers))  # as the record holds them (tuples become lists)


def _where(path: tuple[Any, ...]) -> str:
    named = [f"{level} {step!r}" for level, step in zip(LEVELS, path)]
    below = "".join(f"[{step!r}]" for step in path[len(LEVELS):])
    return ", ".join(named) + (f" at {below}" if below else "")


def _same_float(measured: Any, recorded: Any) -> bool:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (measured, recorded))
    return numbers and (measured == recorded or abs(measured - recorded) <= FLOAT_TOLERANCE
                        or (math.isnan(measured) and math.isnan(recorded)))  # fmt: skip


def golden_differences(measured: Any, recorded: Any, path: tuple[Any, ...] = ()) -> list[str]:
    """Every place where the JSON value ``measured`` departs from ``recorded``, as
    ``"part 'p', field 'f', key 'k' at [i][j]: measured x, recorded y"``: a float must lie
    within ``FLOAT_TOLERANCE`` of the recorded number (NaN equals NaN); dict keys, list
    lengths, strings, integers, booleans and nulls must agree exactly."""
    if isinstance(measured, dict) and isinstance(recorded, dict):
        if measured.keys() != recorded.keys():
            return [f"{_where(path)}: measured keys {sorted(measured.keys() - recorded.keys())} are not recorded, "
                    f"recorded keys {sorted(recorded.keys() - measured.keys())} were not measured"]  # fmt: skip
        return [d for k in measured for d in golden_differences(measured[k], recorded[k], (*path, k))]
    if isinstance(measured, list) and isinstance(recorded, list):
        if len(measured) != len(recorded):
            return [f"{_where(path)}: measured {len(measured)} entries, recorded {len(recorded)}"]
        return [d for i, pair in enumerate(zip(measured, recorded)) for d in golden_differences(*pair, (*path, i))]
    if isinstance(measured, float) or isinstance(recorded, float):
        same = _same_float(measured, recorded)
    else:
        same = type(measured) is type(recorded) and measured == recorded
    return [] if same else [f"{_where(path)}: measured {measured!r}, recorded {recorded!r}"]


@pytest.fixture
def golden():
    """``golden(name, {"part": results, ...})`` asserts that every part measures the numbers
    recorded in ``tests/unit/golden/<name>.json`` (``measured_numbers``, compared by
    ``golden_differences``: floats to 1e-12, the rest exactly). With
    ``RECPRIVACY_RECORD_GOLDEN=1`` it records them instead, with the commit they were measured
    at, and the test is skipped (a recording proves nothing)."""

    def check(name: str, runs: dict[str, Any]) -> None:
        path = GOLDEN / f"{name}.json"
        measured = {part: measured_numbers(results) for part, results in runs.items()}
        if os.environ.get("RECPRIVACY_RECORD_GOLDEN") == "1":
            commit = subprocess.run(["git", "log", "-1", "--format=%h %s"], capture_output=True, text=True,
                                    cwd=GOLDEN, check=True).stdout.strip()  # fmt: skip
            staged = path.with_suffix(".json.tmp")
            staged.write_text(json.dumps({"recorded_at": commit, "runs": measured}, indent=1) + "\n")
            staged.replace(path)
            pytest.skip(f"recorded {path.name} at {commit}")
        differ = golden_differences(measured, json.loads(path.read_text())["runs"])
        assert not differ, f"{path.name}: {len(differ)} differences, the first five: " + "; ".join(differ[:5])

    return check


@pytest.fixture
def golden_comparison():
    """The comparison the ``golden`` fixture applies (``golden_differences``), for its own test."""
    return golden_differences
