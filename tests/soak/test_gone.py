"""The fault helpers' wait for a killed process (kube.gone), without a cluster: a thread that
exits between the listing of /proc/PID/task and the read of its stat file counts as gone, as
the soak's API server restart found when a read raised ESRCH."""

import builtins
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e"))
from kube import gone  # noqa: E402


def test_a_live_process_is_not_gone():
    assert not gone(os.getpid())


def test_a_reaped_process_is_gone():
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert gone(proc.pid)


def test_an_unreaped_child_is_gone():
    proc = subprocess.Popen(["true"])
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        assert gone(proc.pid)  # a zombie holds nothing
    finally:
        proc.wait()


def test_a_thread_that_exits_during_the_read_is_gone(monkeypatch):
    real_open = builtins.open

    class Vanished:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            raise ProcessLookupError(3, "No such process")

    def racing_open(path, *args, **kwargs):
        if path.startswith("/proc/") and path.endswith("/stat"):
            return Vanished()
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", racing_open)
    assert gone(os.getpid())
