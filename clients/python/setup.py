"""setup.py - the build step pyproject.toml cannot state: physd_pb2.py generated into the package.

setuptools runs this for `pip install ./clients/python`. build_py runs protoc (Debian's
protobuf-compiler) on proto/physd.proto, the protocol's one source of truth, found as
$PHYSD_PROTO or ../../proto/physd.proto from this file, and writes physd_pb2.py into the built
physd_client/ folder (never into the source tree). A missing protoc or physd.proto stops the
build naming what is missing.
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithProto(build_py):
    """build_py, then protoc --python_out into <build_lib>/physd_client/."""

    def run(self):
        super().run()
        proto = os.environ.get("PHYSD_PROTO") or os.path.join(HERE, "..", "..", "proto",
                                                                "physd.proto")
        proto = os.path.normpath(proto)
        if not os.path.isfile(proto):
            raise SystemExit("physd_client: %s not found (build from physd's source tree, or set "
                             "PHYSD_PROTO to physd.proto)" % proto)
        protoc = shutil.which("protoc")
        if protoc is None:
            raise SystemExit("physd_client: protoc not found: install protobuf-compiler "
                             "(Debian) to generate physd_pb2.py")
        out = os.path.join(self.build_lib, "physd_client")
        os.makedirs(out, exist_ok=True)
        subprocess.run([protoc, "--proto_path=" + os.path.dirname(proto), "--python_out=" + out,
                        proto], check=True)


setup(cmdclass={"build_py": BuildWithProto})
