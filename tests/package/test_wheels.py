"""``make wheels``: a manylinux wheel for every CPython 3.11+ on this machine, each installed into a
fresh environment of its own Python and checked there, away from the source tree."""

import json

import pytest

from pyfactories import _driver

from .installed import SMOKE, TAG, build_wheels, env_with, pythons, run

#: Every Python's wheel: ``make test-matrix`` (which builds the other Pythons' wheels anyway), not ``make test``.
pytestmark = [pytest.mark.slow, pytest.mark.matrix]


@pytest.fixture(scope="module")
def built():
    files = build_wheels()
    sdist = files.pop("sdist")
    return sdist, files, pythons()


def test_one_wheel_per_python_and_the_sdist(built):
    sdist, wheels, found = built
    assert "cp311" in found and set(wheels) == set(found)
    assert all("manylinux" in w.name for w in wheels.values())
    assert len(list(sdist.parent.glob("pyfactories-*.tar.gz"))) == 1 and sdist.name.endswith(".tar.gz")


def test_the_other_pythons_wheels_are_built_from_the_sdist_with_a_c_compiler_and_no_cython(built):
    sdist, wheels, found = built
    others = set(wheels) - {TAG}  # this Python's comes from the source tree, reusing `make build`
    assert others or list(found) == [TAG]
    for tag in others:
        build_env = (sdist.parent / f"build-env-{tag}.txt").read_text().lower()
        assert "setuptools" in build_env and "cassandra-driver" in build_env and "cython" not in build_env, tag


def test_every_wheel_installs_and_runs_compiled_on_its_python(built, tmp_path):
    _dist, wheels, found = built
    for tag, python in found.items():
        env = tmp_path / tag
        interpreter = env_with(env, f"{wheels[tag]}[cassandra]", python=python)
        result = json.loads(run(interpreter, "-c", SMOKE, cwd=tmp_path).stdout.strip().splitlines()[-1])
        assert result["impl"] == "cython" and result["file"].startswith(str(env)), (tag, result)
        # on exactly when the extra installed a release the fast path is tested on
        assert result["fastpath"] is (result["driver"] in _driver.TESTED_RELEASES["cassandra-driver"]), (tag, result)
        assert result["same"] == dict.fromkeys(result["same"], True) and len(result["same"]) == 3, (tag, result)
