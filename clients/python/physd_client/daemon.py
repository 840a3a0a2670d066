"""physd_client.daemon - start and stop a private physd: a child process on its own Unix
socket in a folder of its own, for helpers that need a daemon next to them (the Dask worker
plugin, physd_client.scenario.run_local).

    with PhysdProcess("/usr/bin/physd", args=["--threads", "1"]) as d:
        with Client.connect_unix(d.socket) as c:
            ...

Not thread-safe: one owner starts and stops it. The folder (socket, log) is removed at stop.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

_SUN_PATH_MAX = 100  # sockaddr_un.sun_path is 108 bytes on Linux; keep a margin


class PhysdProcess:
    """A physd child process listening on ``<folder>/physd.sock``.

    physd: the executable (a path, or a name looked up on PATH). args: more flags (e.g.
    ["--allowed-root", "/data/worlds", "--threads", "2"]). parent: where the private folder is
    made (None = the system's temp folder; a parent whose path would make the socket path too
    long for a Unix socket falls back to the temp folder). start_timeout: seconds to wait for
    the socket to accept."""

    def __init__(self, physd="physd", args=(), parent=None, start_timeout=20.0):
        self.physd = physd
        self.args = list(args)
        self.parent = parent
        self.start_timeout = start_timeout
        self.dir = None
        self.socket = None
        self.proc = None
        self.log_path = None

    def start(self):
        """Start physd and wait until its socket accepts; raises RuntimeError with the end of
        its log when it exits or does not listen in time (the process is then stopped and
        its folder removed). Returns self."""
        parent = self.parent
        if parent and len(os.path.join(parent, "physd-XXXXXXXX", "physd.sock")) > _SUN_PATH_MAX:
            parent = None
        self.dir = tempfile.mkdtemp(prefix="physd-", dir=parent)
        self.socket = os.path.join(self.dir, "physd.sock")
        self.log_path = os.path.join(self.dir, "physd.log")
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen([self.physd, "--socket", self.socket] + self.args,
                                         stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                msg = "physd exited with %d: %s" % (self.proc.returncode, self.log_tail())
                self.stop()  # removes the folder
                raise RuntimeError(msg)
            if self._accepts():
                return self
            time.sleep(0.02)
        msg = "physd did not listen within %.0f s: %s" % (self.start_timeout, self.log_tail())
        self.stop()
        raise RuntimeError(msg)

    def _accepts(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def log_tail(self, n=2000):
        """The last n characters of physd's log ("" when there is none)."""
        try:
            with open(self.log_path) as f:
                return f.read()[-n:]
        except (OSError, TypeError):
            return ""

    def stop(self, timeout=10.0):
        """SIGTERM (physd drains and exits 0), SIGKILL after `timeout` s; remove the folder.
        Returns physd's exit status (None when it was not running). Safe to call twice."""
        rc = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            rc = self.proc.returncode
            self.proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        return rc

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
