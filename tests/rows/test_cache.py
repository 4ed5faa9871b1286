"""The column-list cache: bounded, thread-safe, resizable."""

import threading

import pytest

from pyfactories.rows._rows_py import CacheInfo


def test_cache_is_bounded_when_columns_are_aliased_dynamically(impl):
    impl.set_cache_size(16)
    try:
        for i in range(500):
            row = impl.cached_named_tuple_factory([f"c{i}", "v"], [(i, i)])[0]
            assert row == (i, i) and type(row)._fields == (f"c{i}", "v")
            impl.dict_factory([f"d{i}"], [(i,)])
        info = impl.cache_info()
        assert isinstance(info, CacheInfo)
        assert info.currsize == 16 and info.maxsize == 16 and info.misses == 500
    finally:
        impl.set_cache_size(1024)


def test_least_recently_used_is_evicted(impl):
    impl.set_cache_size(2)
    try:
        a = type(impl.cached_named_tuple_factory(["a"], [(1,)])[0])
        impl.cached_named_tuple_factory(["b"], [(1,)])
        assert type(impl.cached_named_tuple_factory(["a"], [(1,)])[0]) is a  # a is now the most recent
        impl.cached_named_tuple_factory(["c"], [(1,)])  # evicts b
        assert type(impl.cached_named_tuple_factory(["a"], [(1,)])[0]) is a
        misses = impl.cache_info().misses
        impl.cached_named_tuple_factory(["b"], [(1,)])
        assert impl.cache_info().misses == misses + 1
    finally:
        impl.set_cache_size(1024)


def test_default_size_and_validation(impl):
    assert impl.cache_info().maxsize == 1024
    for bad in (0, -1, 1.5, "10", True):
        with pytest.raises(ValueError, match="positive int"):
            impl.set_cache_size(bad)
    assert impl.cache_info().maxsize == 1024


def test_threads_share_one_class_per_column_list(impl):
    impl.set_cache_size(8)
    errors = []
    classes = {}
    barrier = threading.Barrier(8)

    def worker(tid):
        try:
            barrier.wait()
            for i in range(2000):
                cols = [f"k{i % 12}", "v"]
                row = impl.cached_named_tuple_factory(cols, [(tid, i)])[0]
                assert row == (tid, i) and type(row)._fields == (cols[0], "v")
                d = impl.dict_factory(cols, [(tid, i)])[0]
                assert d == {cols[0]: tid, "v": i}
                if i < 12:
                    classes.setdefault((tid, cols[0]), type(row))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        impl.set_cache_size(1024)
    assert errors == []
    info = impl.cache_info()
    assert info.currsize <= 8
    assert info.hits + info.misses == 8 * 2000
