# Checks a plush GLB the way a Blender user meets it: imports it with Blender's own glTF importer, poses
# the scene at a frame and measures how far the evaluated mesh lies from plush's PLY frame (converted to
# glTF's metres and to Blender's Z-up axes). Run:
#   blender -b --python tools/blender_gltf_check.py -- OUT/model_plush.glb OUT/frames/frame_00060.ply 60
import struct
import sys

import numpy
if not hasattr(numpy, "bool"):       # Blender 3.4's importer still says numpy.bool (gone in numpy 1.24)
    numpy.bool = bool

import bpy
import mathutils

glb, ply_path, frame = sys.argv[sys.argv.index("--") + 1:][:3]
bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps = 30                # plush's clock: frame F is F/30 s
bpy.ops.import_scene.gltf(filepath=glb)
meshes = [o for o in scene.objects if o.type == "MESH"]
arms = [o for o in scene.objects if o.type == "ARMATURE"]
print("imported: %d mesh, %d armature, %d bones, actions %s" % (
    len(meshes), len(arms), len(arms[0].data.bones) if arms else 0,
    [(a.name, tuple(a.frame_range)) for a in bpy.data.actions]))

data = open(ply_path, "rb").read()
start = data.index(b"end_header\n") + len(b"end_header\n")
count = int([l for l in data[:start].split(b"\n") if l.startswith(b"element vertex")][0].split()[2])
ref = [struct.unpack_from("<3f", data, start + 24 * k) for k in range(count)]

scene.frame_set(int(frame))
graph = bpy.context.evaluated_depsgraph_get()
points = []
for o in meshes:
    e = o.evaluated_get(graph)
    m = e.to_mesh()
    points += [tuple(e.matrix_world @ v.co) for v in m.vertices]
    e.to_mesh_clear()
tree = mathutils.kdtree.KDTree(len(points))
for i, p in enumerate(points):
    tree.insert(p, i)
tree.balance()
worst = 0.0
for x, y, z in ref:
    gx, gy, gz = x * 0.08, y * 0.08, -z * 0.08     # PMX -> glTF
    worst = max(worst, tree.find((gx, -gz, gy))[2])  # glTF Y-up -> Blender Z-up
print("vertices: blender %d, plush %d; worst distance at frame %s: %.3g m" % (len(points), len(ref), frame, worst))
