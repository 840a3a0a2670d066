#!/usr/bin/python3
"""hello_client.py - the Python client run from INSTALLED files only (scripts/check-install.sh).

Imports physd_client from the staged site folder that PYTHONPATH names (and checks that it came
from there, not from the source tree), with no PHYSD_PB2_DIR: the generated protobuf module must
be found inside the installed package. Connects to the staged physd's Unix socket, loads the
world given by path, steps it with StepAndObserve and prints the state.

    usage: hello_client.py SOCKET WORLD.xml EXPECTED_SITE_DIR
Exit status 0 on success, 1 with the reason on stderr.
"""
import os
import sys


def main():
    if len(sys.argv) != 4:
        print("usage: hello_client.py SOCKET WORLD.xml EXPECTED_SITE_DIR", file=sys.stderr)
        return 2
    sock, world, site = sys.argv[1:]
    if os.environ.get("PHYSD_PB2_DIR"):
        print("hello_client.py: PHYSD_PB2_DIR is set; the installed package must not need it",
              file=sys.stderr)
        return 1
    import physd_client
    pkg = os.path.realpath(os.path.dirname(physd_client.__file__))
    if not pkg.startswith(os.path.realpath(site) + os.sep):
        print("hello_client.py: physd_client imported from %s, not from %s" % (pkg, site),
              file=sys.stderr)
        return 1
    pb = physd_client.load_proto()
    if pb.__name__ != "physd_client.physd_pb2":
        print("hello_client.py: physd_pb2 came from %s, not from the installed package"
              % pb.__file__, file=sys.stderr)
        return 1
    with physd_client.Client.connect_unix(sock, name="hello_client.py") as c:
        loaded = c.load_world(path=world)
        frame = c.step_and_observe(n=50)
        if frame.step != 50 or not frame.bodies:
            print("hello_client.py: expected step 50 with bodies, got step %d with %d bodies"
                  % (frame.step, len(frame.bodies)), file=sys.stderr)
            return 1
        b = frame.bodies[0]
        print("python: physd_client from %s; loaded %s (%d bodies); step %d, body %d at "
              "(%.4f, %.4f, %.4f)" % (pkg, loaded.name, loaded.bodies, frame.step, b.id,
                                      b.pos.x, b.pos.y, b.pos.z))
    return 0


if __name__ == "__main__":
    sys.exit(main())
