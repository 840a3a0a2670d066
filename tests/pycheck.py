"""pycheck.py - what the Python test scripts share: check() prints a line per check and counts
the failures (pycheck.failures), free_port() finds a loopback TCP port.

A script under tests/<dir>/ imports it with
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import pycheck
    from pycheck import check, free_port
and exits 1 when pycheck.failures is not 0.
"""
import socket

failures = 0


def check(cond, what):
    """Print `ok   what` or `FAIL what`; count a failure. Returns cond."""
    global failures
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures += 1
    return cond


def free_port():
    """A TCP port on 127.0.0.1 free right now (bound and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
