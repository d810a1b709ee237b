"""The one executor's kept pool: batches of tasks given the pool of a worker_pool block run
on the same worker processes, started once."""

from __future__ import annotations

import os

from labelaudit.models import run_fits, run_tasks, worker_pool


def pid_plus(shared, _slot, x):
    return os.getpid(), shared + x


def test_batches_in_a_worker_pool_block_reuse_the_same_processes():
    shared = 10
    with worker_pool(shared, 2) as pool:
        first = run_tasks(pid_plus, [(i,) for i in range(6)], shared=shared, workers=2,
                          pool=pool)
        second = run_tasks(pid_plus, [(i,) for i in range(6)], shared=shared, workers=2,
                           pool=pool)
    assert [r for _, r in first] == [r for _, r in second] == list(range(10, 16))
    pids = {p for p, _ in first} | {p for p, _ in second}
    assert os.getpid() not in pids and len(pids) <= 2
    # without the pool (or with another shared object) each call starts its own pool
    third = run_tasks(pid_plus, [(i,) for i in range(4)], shared=shared, workers=2)
    assert not {p for p, _ in third} & pids
    with worker_pool(shared, 2, "local") as kept:
        other = run_fits(pid_plus, [(1,), (2,)], shared=11, workers=2, pool=kept)
        again = run_fits(pid_plus, [(1,), (2,)], shared=shared, workers=2, pool=kept)
    assert [r for _, r in other] == [12, 13] and [r for _, r in again] == [11, 12]
    assert not {p for p, _ in other} & {p for p, _ in again}
    with worker_pool(shared, 2, "ray") as none, worker_pool(shared, 1) as nothing:
        assert none is None and nothing is None
