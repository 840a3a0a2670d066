#!/usr/bin/env python3
"""make_bowl.py - writes assets/bowl.obj, the non-convex bowl of bowl_scene.xml: a closed
profile revolved about z in 24 steps (flat inner bottom z = 0 out to r = 0.04, a 45-degree wall
up to the rim r = 0.1 at z = 0.06, 1 cm thick), quads and axis fans, with normals, the way
modelling tools export it. The profile matches tests/solver/collision/test_trimesh.c's bowl."""
import math

PROFILE = [(0.0, 0.0), (0.04, 0.0), (0.1, 0.06), (0.11, 0.06), (0.045, -0.01), (0.0, -0.01)]
N = 24

def main():
    verts, faces, index = [], [], {}
    for i, (r, z) in enumerate(PROFILE):
        if r == 0.0:
            index[i] = [len(verts) + 1] * N
            verts.append((0.0, 0.0, z))
        else:
            index[i] = [len(verts) + 1 + j for j in range(N)]
            for j in range(N):
                a = 2 * math.pi * j / N
                verts.append((r * math.cos(a), r * math.sin(a), z))
    for i in range(len(PROFILE) - 1):
        for j in range(N):
            k = (j + 1) % N
            # outward: the loop runs inside-up, rim, outside-down, so (i, k) (i, j) (i+1, j) ...
            quad = [index[i][k], index[i][j], index[i + 1][j], index[i + 1][k]]
            corners = []
            for v in quad:
                if v not in corners:
                    corners.append(v)
            faces.append(corners)
    with open("assets/bowl.obj", "w") as f:
        f.write("# bowl.obj - written by make_bowl.py\n# units: metres\no bowl\n")
        for v in verts:
            f.write("v %.9f %.9f %.9f\n" % v)
        f.write("vn 0 0 1\nvt 0 0\ns off\nusemtl clay\n")
        for c in faces:
            f.write("f " + " ".join("%d/1/1" % v for v in c) + "\n")

main()
