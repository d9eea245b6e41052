# Replays a plush bake (PMX + VMD) in Blender with mmd_tools, the way an MMD user meets it, and measures
# how far the mesh Blender poses lies from plush's own frames: per frame the RMS and the worst vertex
# distance over the soft part (the materials given), the vertices the IK chains move (mmd_tools solves
# IK its own way), the rest, and the whole model, in model units and as a share of the model's height,
# beside the bake's error bound when given. Physics is off: the model is imported without its rigid
# bodies and joints, so the bones the bake keyed (--bake-physics) follow their keys.
#
# Needs Blender 3.x with mmd_tools 2.x as an add-on (tools/install-deps.sh --clients installs Blender;
# mmd_tools' `mmd_tools` folder goes into DIR/addons, DIR given as BLENDER_USER_SCRIPTS). Run:
#   plush run MODEL.pmx --cage HAIR --motion M.vmd --frames 601 --bake-physics \
#       --export pmx+vmd,obj --every 50 -o OUT
#   env PATH=/usr/bin:/bin BLENDER_USER_SCRIPTS=DIR blender -b --python tools/blender_mmd_replay.py -- \
#       OUT/MODEL_plush.pmx OUT/MODEL_plush.vmd --soft HAIR --frames 50:600:50 \
#       [--obj OUT/frames] [--plush build/plush] [--bound D] [--slerp] [--save OUT/blender.npz]
# References: --obj compares with the run's frames (OUT/frames/frame_NNNNN.obj, what plush simulated);
# --plush poses the same baked files with `plush pose` (what plush's own reader makes of them), and
# also compares bone positions (the bones that miss most are listed). At least one is needed.
# --soft names materials by name or number (as in the baked PMX). --offset K: VMD frame F is Blender
# frame F + K (default 1: mmd_tools' importer with margin 0 puts frame 0 at Blender frame 1; the first
# frame is also measured at offsets 0 and 2 to show that). --slerp sets the bones' rotations at the
# frames measured to MMD's slerp of their keys, where mmd_tools blends a quaternion's components (what
# remains is the IK and what else the player does its own way). A model that fails to load, or a
# missing reference frame, gives one line on stderr and exit status 1.
import os
import subprocess
import sys
import tempfile

import numpy

SCALE = 0.08          # mmd_tools' default import scale (PMX units to Blender's)


def fail(message):
    sys.stderr.write("blender_mmd_replay: %s\n" % message)
    sys.exit(1)


def parse_args(argv):
    if len(argv) < 2:
        fail("usage: -- BAKED.pmx BAKED.vmd --frames F,F,...|FIRST:LAST:STEP [--soft MAT,...] [--obj DIR] "
             "[--plush PLUSH] [--bound D] [--offset K] [--slerp] [--save FILE.npz]")
    args = {"pmx": argv[0], "vmd": argv[1], "frames": None, "soft": [], "obj": None, "plush": None,
            "bound": None, "offset": 1, "save": None, "slerp": False}
    rest = argv[2:]
    if "--slerp" in rest:
        args["slerp"] = True
        rest = [r for r in rest if r != "--slerp"]
    for i in range(0, len(rest), 2):
        key = rest[i]
        if i + 1 >= len(rest):
            fail("%s needs a value" % key)
        value = rest[i + 1]
        if key == "--frames":
            args["frames"] = parse_frames(value)
        elif key == "--soft":
            args["soft"] = value.split(",")
        elif key == "--obj":
            args["obj"] = value
        elif key == "--plush":
            args["plush"] = value
        elif key in ("--bound", "--offset"):
            try:
                args[key[2:]] = float(value) if key == "--bound" else int(value)
            except ValueError:
                fail("%s: '%s' is not a number" % (key, value))
        elif key == "--save":
            args["save"] = value
        else:
            fail("unknown option '%s'" % key)
    if not args["frames"]:
        fail("--frames is required")
    if not args["obj"] and not args["plush"]:
        fail("give a reference: --obj DIR and/or --plush PLUSH")
    return args


def parse_frames(value):
    """'50,100,150' or 'FIRST:LAST:STEP' (LAST included)."""
    try:
        if ":" in value:
            first, last, step = (int(x) for x in value.split(":"))
            return list(range(first, last + 1, step))
        return sorted(set(int(x) for x in value.split(",")))
    except ValueError:
        fail("--frames: '%s' is not F,F,... or FIRST:LAST:STEP" % value)


def model_sets(model, soft_names):
    """Vertex index sets: the soft part (the materials named), the vertices IK moves, the rest, all."""
    count = len(model.vertices)
    faces = numpy.asarray(model.faces, dtype=numpy.int64).reshape(-1)
    soft = numpy.zeros(count, dtype=bool)
    start = 0
    found = set()
    for index, material in enumerate(model.materials):
        end = start + material.vertex_count
        if material.name in soft_names or material.name_e in soft_names or str(index) in soft_names:
            soft[faces[start:end]] = True
            found.add(material.name)
        start = end
    for name in soft_names:
        if not any(name in (m.name, m.name_e, str(i)) for i, m in enumerate(model.materials)):
            fail("%s: no material '%s'" % (model.name, name))

    # A bone moves with IK when it is an IK link, or its parent or the bone it takes a rotation or a
    # move from does (the ankles under the knees, the leg D bones that copy the legs).
    bones = model.bones
    by_ik = [False] * len(bones)
    for b in bones:
        if b.isIK:
            for link in b.ik_links:
                by_ik[link.target] = True
    changed = True
    while changed:
        changed = False
        for i, b in enumerate(bones):
            if by_ik[i]:
                continue
            sources = [b.parent] if b.parent is not None and b.parent >= 0 else []
            if b.additionalTransform is not None and b.additionalTransform[0] >= 0:
                sources.append(b.additionalTransform[0])
            if any(by_ik[s] for s in sources):
                by_ik[i] = True
                changed = True
    ik = numpy.zeros(count, dtype=bool)
    for i, v in enumerate(model.vertices):
        weights = v.weight.weights
        if not isinstance(weights, (list, tuple)):
            weights = [weights.weight]                          # SDEF: the first bone's weight
        if len(v.weight.bones) == 1:
            weights = [1.0]
        elif len(v.weight.bones) == 2:
            weights = [weights[0], 1.0 - weights[0]]            # BDEF2 keeps the first bone's weight
        if any(w > 0.0 and by_ik[b] for b, w in zip(v.weight.bones, weights) if b >= 0):
            ik[i] = True
    sets = [("soft (%s)" % ",".join(sorted(found)), soft)] if soft_names else []
    sets += [("IK-moved", ik & ~soft), ("rest", ~ik & ~soft), ("all", numpy.ones(count, dtype=bool))]
    return sets, [b.name for i, b in enumerate(bones) if by_ik[i]]


def read_obj(path):
    points = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("v "):
                    points.append([float(x) for x in line.split()[1:4]])
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    return numpy.asarray(points)


def read_bones_csv(path):
    """'index,name,x,y,z,qx,qy,qz,qw' rows: name -> position."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("index"):
                continue
            head, x, y, z = line.rstrip("\n").rsplit(",", 7)[:4]
            name = head.split(",", 1)[1]
            if name.startswith('"'):
                name = name[1:-1].replace('""', '"')
            out[name] = numpy.array([float(x), float(y), float(z)])
    return out


def plush_pose(plush, pmx, vmd, frame, tmp):
    mesh = os.path.join(tmp, "pose_%05d.obj" % frame)
    bones = os.path.join(tmp, "pose_%05d.csv" % frame)
    run = subprocess.run([plush, "pose", pmx, "--motion", vmd, "--frame", str(frame), "--mesh", mesh,
                          "--bones", bones], capture_output=True, text=True)
    if run.returncode != 0:
        fail("plush pose at frame %d: %s" % (frame, run.stderr.strip().splitlines()[-1]))
    return read_obj(mesh), read_bones_csv(bones)


def slerp_rotations(action, bframes):
    """Sets every bone's rotation at the given Blender frames to what MMD plays there. mmd_tools keys a
    rotation's four components as four curves, each with the key's Bezier, so between keys Blender
    blends the quaternions component by component (normalised when posed); MMD slerps them by the same
    Bezier factor. The factor is read back off the component that changes most, then the two keys are
    slerped by it. All values are read before any is written: a key added splits its segment."""
    import mathutils
    curves = {}
    for fc in action.fcurves:
        if fc.data_path.endswith(".rotation_quaternion"):
            curves.setdefault(fc.data_path, [None] * 4)[fc.array_index] = fc
    writes = []
    for quad in curves.values():
        if None in quad:
            continue
        keys = [kp.co[0] for kp in quad[0].keyframe_points]
        for bframe in bframes:
            i = next((j for j in range(len(keys) - 1) if keys[j] < bframe < keys[j + 1]), None)
            if i is None:
                continue
            q0 = [fc.keyframe_points[i].co[1] for fc in quad]
            q1 = [fc.keyframe_points[i + 1].co[1] for fc in quad]
            now = [fc.evaluate(bframe) for fc in quad]
            j = max(range(4), key=lambda c: abs(q1[c] - q0[c]))
            if abs(q1[j] - q0[j]) < 1e-9:
                continue
            factor = (now[j] - q0[j]) / (q1[j] - q0[j])
            q = mathutils.Quaternion(q0).normalized().slerp(mathutils.Quaternion(q1).normalized(), factor)
            writes.append((quad, bframe, q))
    for quad, bframe, q in writes:
        for fc, value in zip(quad, q):
            fc.keyframe_points.insert(bframe, value, options={"FAST"})
    for quad in curves.values():
        for fc in quad:
            if fc is not None:
                fc.update()
    return len(writes)


def blender_to_pmx(points):
    """mmd_tools imports PMX (x, y, z) as Blender (x, z, y) times its scale."""
    return points[:, [0, 2, 1]] / SCALE


def stats(a, b, mask):
    d = numpy.linalg.norm(a[mask] - b[mask], axis=1)
    if len(d) == 0:
        return 0.0, 0.0, -1
    worst = int(numpy.argmax(d))
    return float(numpy.sqrt(numpy.mean(d * d))), float(d[worst]), int(numpy.flatnonzero(mask)[worst])


def main():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    args = parse_args(argv)

    import addon_utils
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    if addon_utils.enable("mmd_tools", default_set=True) is None:
        fail("mmd_tools is not installed (put its folder in $BLENDER_USER_SCRIPTS/addons)")
    from mmd_tools.core import pmx as mmd_pmx

    try:
        model = mmd_pmx.load(args["pmx"])
    except Exception as e:      # mmd_tools raises its own kinds for a bad file
        fail("%s: %s" % (args["pmx"], e))
    rest = numpy.asarray([v.co for v in model.vertices])
    height = float(rest[:, 1].max() - rest[:, 1].min())
    sets, ik_bones = model_sets(model, args["soft"])

    # Physics off: no rigid bodies or joints, so the keyed physics bones follow their keys. Vertices kept
    # as the file has them (no cleaning, no merging) so vertex i is PMX vertex i; names left as they are
    # so the VMD's bone names map by their Japanese names (mmd_tools' PMX mapper).
    bpy.ops.mmd_tools.import_model(filepath=args["pmx"], scale=SCALE, clean_model=False,
                                   remove_doubles=False, rename_bones=False,
                                   types={"MESH", "ARMATURE", "DISPLAY", "MORPHS"}, log_level="WARNING")
    scene = bpy.context.scene
    root = next(o for o in scene.objects if getattr(o, "mmd_type", "") == "ROOT")
    arm = next(o for o in scene.objects if o.type == "ARMATURE")
    meshes = [o for o in scene.objects if o.type == "MESH" and o.data.vertices]
    if len(meshes) != 1 or len(meshes[0].data.vertices) != len(model.vertices):
        fail("mmd_tools made %s mesh vertices of the file's %d" % (
            [len(o.data.vertices) for o in meshes], len(model.vertices)))
    mesh = meshes[0]
    for o in scene.objects:
        o.select_set(False)
    root.select_set(True)
    bpy.context.view_layer.objects.active = root
    bpy.ops.mmd_tools.import_vmd(files=[{"name": os.path.basename(args["vmd"])}],
                                 directory=os.path.dirname(os.path.abspath(args["vmd"])),
                                 scale=SCALE, margin=0, bone_mapper="PMX", update_scene_settings=True)
    if scene.rigidbody_world is not None:
        scene.rigidbody_world.enabled = False
    if args["slerp"]:
        bframes = sorted({f + args["offset"] + k for f in args["frames"] for k in (-1, 0, 1)})
        print("slerp: %d bone rotations set as MMD interpolates them" % slerp_rotations(
            arm.animation_data.action, bframes))
    pose_names = {pb.mmd_bone.name_j: pb for pb in arm.pose.bones if pb.mmd_bone.name_j}
    print("mmd_tools: %d vertices, %d bones (%d with a PMX name), height %.3f units; %d bones moved by IK" % (
        len(mesh.data.vertices), len(arm.pose.bones), len(pose_names), height, len(ik_bones)))

    def blender_points(bframe):
        scene.frame_set(bframe)
        graph = bpy.context.evaluated_depsgraph_get()
        evaluated = mesh.evaluated_get(graph)
        data = evaluated.to_mesh()
        co = numpy.empty(len(data.vertices) * 3)
        data.vertices.foreach_get("co", co)
        evaluated.to_mesh_clear()
        co = co.reshape(-1, 3)
        m = numpy.asarray(mesh.matrix_world)
        world = co @ m[:3, :3].T + m[:3, 3]
        return blender_to_pmx(world)

    def blender_bones():
        m = numpy.asarray(arm.matrix_world)
        out = {}
        for name, pb in pose_names.items():
            out[name] = blender_to_pmx((m[:3, :3] @ numpy.asarray(pb.head) + m[:3, 3])[None, :])[0]
        return out

    tmp_dir = tempfile.TemporaryDirectory(prefix="mmd_replay_")
    tmp = tmp_dir.name
    bound = args["bound"]
    print("frame | reference | " + " | ".join("%s RMS, worst" % name for name, _ in sets) +
          (" | bound %.4g (%.3f%%)" % (bound, 100 * bound / height) if bound is not None else ""))
    saved = {}
    for n, frame in enumerate(args["frames"]):
        refs = []
        if args["obj"]:
            refs.append(("run", read_obj(os.path.join(args["obj"], "frame_%05d.obj" % frame)), None))
        if args["plush"]:
            points, bones = plush_pose(args["plush"], args["pmx"], args["vmd"], frame, tmp)
            refs.append(("pose", points, bones))
        if n == 0:
            for k in (args["offset"] - 1, args["offset"] + 1, args["offset"]):
                got = blender_points(frame + k)
                print("offset check: VMD frame %d at Blender frame %d: RMS %.4g over the %s vertices (%s)" % (
                    frame, frame + k, stats(got, refs[0][1], sets[-2][1])[0], sets[-2][0], refs[0][0]))
        else:
            got = blender_points(frame + args["offset"])
        saved["frame_%05d" % frame] = got
        for ref_name, ref, ref_bones in refs:
            if len(ref) != len(got):
                fail("frame %d: the %s reference has %d vertices, the model %d" % (
                    frame, ref_name, len(ref), len(got)))
            cells = []
            for _, mask in sets:
                rms, worst, at = stats(got, ref, mask)
                cells.append("%.4f (%.3f%%), %.4f (%.3f%%)%s at v%d" % (
                    rms, 100 * rms / height, worst, 100 * worst / height,
                    " over" if bound is not None and worst > bound else "", at))
            print("%5d | %s | %s" % (frame, ref_name, " | ".join(cells)))
            if ref_bones is not None:
                ours = blender_bones()
                gaps = sorted(((float(numpy.linalg.norm(ours[k] - ref_bones[k])), k)
                               for k in ours if k in ref_bones), reverse=True)
                print("        bones off most (pose): " + ", ".join(
                    "%s %.4f%s" % (k, d, " (IK)" if k in ik_bones else "") for d, k in gaps[:6]))
                # Who reaches: each IK bone's distance to its target bone, Blender's and plush's.
                reach = []
                for b in model.bones:
                    if b.isIK and b.name in ours and model.bones[b.target].name in ours:
                        t = model.bones[b.target].name
                        reach.append("%s %.4f/%.4f" % (b.name, numpy.linalg.norm(ours[b.name] - ours[t]),
                                                       numpy.linalg.norm(ref_bones[b.name] - ref_bones[t])))
                print("        IK bone to its target, Blender/plush: " + ", ".join(reach))
    if args["save"]:
        for name, mask in sets:
            saved["set_" + name.split(" ")[0]] = mask
        numpy.savez_compressed(args["save"], **saved)
    tmp_dir.cleanup()


main()
