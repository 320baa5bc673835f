"""``make test``'s scheduling (``tests/conftest.py``): the files of the Ray tests are one unit of work
for one xdist worker, every other file its own, and a Ray test in a file not listed in ``RAY_FILES``
stops collection with a usage error."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
# by path: ``import conftest`` finds whichever conftest module pytest imported last (tests/integration has one)
_spec = importlib.util.spec_from_file_location("suite_conftest", ROOT / "tests" / "conftest.py")
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)


def _config(dist: str) -> SimpleNamespace:
    values = {"dist": dist, "tx": ["3*popen"]}
    return SimpleNamespace(getvalue=values.__getitem__)


def _item(file: str, fixtures: tuple[str, ...] = (), marked_ray: bool = False) -> SimpleNamespace:
    marker = object() if marked_ray else None
    return SimpleNamespace(path=ROOT / file, nodeid=f"{file}::test_x", fixturenames=fixtures,
                           get_closest_marker=lambda name: marker if name == "ray" else None)


def test_every_listed_ray_file_exists():
    assert conftest.RAY_FILES and all((ROOT / f).is_file() for f in conftest.RAY_FILES)


def test_the_ray_files_are_one_unit_of_work_and_other_files_their_own():
    scheduler = conftest.pytest_xdist_make_scheduler(_config("loadfile"), None)
    ray_a, ray_b = sorted(conftest.RAY_FILES)[:2]
    assert scheduler._split_scope(f"{ray_a}::test_one") == scheduler._split_scope(f"{ray_b}::test_two[p]") == "Ray"
    assert scheduler._split_scope("tests/unit/test_cli.py::test_one") == "tests/unit/test_cli.py"
    assert conftest.pytest_xdist_make_scheduler(_config("load"), None) is None  # other modes: xdist's own


def test_a_ray_test_outside_the_list_is_a_usage_error():
    stray = _item("tests/unit/test_cli.py", fixtures=("local_ray",))
    with pytest.raises(pytest.UsageError, match="tests/unit/test_cli.py::test_x runs on Ray: add its file to RAY_FILES"):
        conftest.pytest_collection_modifyitems(None, [stray])
    with pytest.raises(pytest.UsageError, match="RAY_FILES"):
        conftest.pytest_collection_modifyitems(None, [_item("tests/unit/test_cli.py", marked_ray=True)])


def test_tests_that_start_their_own_ray_run_after_the_shared_instances_tests():
    ray_file = sorted(conftest.RAY_FILES)[0]
    own, shared, plain = _item(ray_file, marked_ray=True), _item(ray_file, fixtures=("local_ray",)), _item(ray_file)
    items = [own, shared, plain]
    conftest.pytest_collection_modifyitems(None, items)
    assert items == [shared, plain, own]

