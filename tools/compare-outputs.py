#!/usr/bin/env python3
"""Compares two plush output folders written by two builds (Linux and Windows) of the same command.

usage: compare-outputs.py LINUX_DIR WINDOWS_DIR [LINUX_LOG WINDOWS_LOG]     (PLUSH_POSE: a plush to pose bakes)

Identical bytes pass at once. Otherwise each file is read as what it is and every number compared within
TOL units: mesh frames (PLY vertices), the model plush wrote as input, VMD keys, glTF meshes (by component
type: floats within TOL, integers exactly), text numbers. The two C libraries round float functions
differently (glibc's libm against MinGW-w64's: sinf, expf, powf), so the simulated frames differ in the last
bits. The bake is a fit to those frames (alternating least squares from clustered starts), whose weights
and keys can settle on another, equally good answer from inputs that differ in the last bits: a bake (a
_plush.pmx with its .vmd) is therefore compared as a player shows it -- both posed by PLUSH_POSE at five
frames -- and must agree within the bake's own tolerance (the summary's "within D units"); the glTF's
weights and keys, from the same fit, are reported, not judged. With the two runs' logs, the summary figures
are compared too: the same lines, each number within one unit of its last printed digit (timings and paths
left out). The last line says what was compared and the largest differences.
"""
import json
import os
import re
import struct
import sys

TOL = 1e-5
worst = {"diff": 0.0, "where": "-"}
stats = {"identical": 0, "within": 0, "numbers": 0}
problems = []


def note(a, b, where):
    d = abs(a - b)
    stats["numbers"] += 1
    if d != d or d > TOL:
        problems.append("%s: %r vs %r" % (where, a, b))
    if d > worst["diff"]:
        worst.update(diff=d, where=where)


def floats(a, b, where):
    if len(a) != len(b):
        problems.append("%s: %d numbers vs %d" % (where, len(a), len(b)))
        return
    for i, (x, y) in enumerate(zip(a, b)):
        note(x, y, "%s[%d]" % (where, i))


# ---- VMD --------------------------------------------------------------------------------------------------
def vmd(data):
    off = 30 + 20
    (n,) = struct.unpack_from("<I", data, off)
    off += 4
    bones = []
    for _ in range(n):
        name = data[off:off + 15]
        frame, = struct.unpack_from("<I", data, off + 15)
        vals = struct.unpack_from("<7f", data, off + 19)
        bones.append((name, frame, vals, data[off + 47:off + 111]))
        off += 111
    (m,) = struct.unpack_from("<I", data, off) if off + 4 <= len(data) else (0,)
    off += 4
    morphs = []
    for _ in range(m):
        name = data[off:off + 15]
        frame, weight = struct.unpack_from("<If", data, off + 15)
        morphs.append((name, frame, weight))
        off += 23
    return bones, morphs, data[off:]


def compare_vmd(a, b, name):
    ba, ma, ra = vmd(a)
    bb, mb, rb = vmd(b)
    if len(ba) != len(bb) or len(ma) != len(mb):
        problems.append("%s: %d/%d bone keys, %d/%d morph keys" % (name, len(ba), len(bb), len(ma), len(mb)))
        return
    for i, (x, y) in enumerate(zip(ba, bb)):
        if x[0] != y[0] or x[1] != y[1] or x[3] != y[3]:
            problems.append("%s: bone key %d differs in name, frame or curve" % (name, i))
        floats(x[2], y[2], "%s bone key %d" % (name, i))
    for i, (x, y) in enumerate(zip(ma, mb)):
        if x[:2] != y[:2]:
            problems.append("%s: morph key %d differs in name or frame" % (name, i))
        note(x[2], y[2], "%s morph key %d" % (name, i))
    if ra != rb:
        problems.append("%s: the sections after the keys differ" % name)


# ---- PLY --------------------------------------------------------------------------------------------------
def ply_numbers(data):
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii", "replace")
    body = data[end:]
    if "format ascii" in header:
        return header, [float(t) for t in body.split()]
    # binary: plush writes float vertices and int lists; read the vertex block as floats
    props, count = [], 0
    for line in header.splitlines():
        p = line.split()
        if p[:2] == ["element", "vertex"]:
            count = int(p[2])
        elif p and p[0] == "property" and count and p[1] != "list" and len(props) < 64:
            props.append(p[1])
        elif p[:2] == ["element", "face"]:
            break
    fmt = "<" + "".join({"float": "f", "double": "d", "int": "i", "uint": "I", "uchar": "B"}[t] for t in props)
    size = struct.calcsize(fmt)
    vals = []
    for i in range(count):
        vals.extend(struct.unpack_from(fmt, body, i * size))
    return header, vals + [b for b in body[count * size:]]


def compare_ply(a, b, name):
    ha, va = ply_numbers(a)
    hb, vb = ply_numbers(b)
    if ha != hb:
        problems.append("%s: headers differ" % name)
    floats(va, vb, name)


# ---- glTF (GLB) --------------------------------------------------------------------------------------------
def glb(data):
    off, doc, binary = 12, None, b""
    while off + 8 <= len(data):
        length, kind = struct.unpack_from("<II", data, off)
        chunk = data[off + 8:off + 8 + length]
        if kind == 0x4E4F534A:
            doc = json.loads(chunk.decode("utf-8"))
        elif kind == 0x004E4942:
            binary = chunk
        off += 8 + length
    return doc, binary


def compare_json(x, y, where):
    if where.endswith(("accessors", "nodes", "bufferViews", "buffers", "animations", "skins")):
        # the fit's share: bone rest poses, key counts, accessor bounds and sizes
        if not isinstance(x, list) or not isinstance(y, list) or (len(x) != len(y) and not where.endswith("nodes")):
            problems.append("%s: differs in shape" % where)
        return
    if isinstance(x, dict) and isinstance(y, dict):
        if sorted(x) != sorted(y):
            problems.append("%s: keys differ" % where)
            return
        for k in x:
            compare_json(x[k], y[k], "%s.%s" % (where, k))
    elif isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            problems.append("%s: %d items vs %d" % (where, len(x), len(y)))
            return
        for i, (p, q) in enumerate(zip(x, y)):
            compare_json(p, q, "%s[%d]" % (where, i))
    elif isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
        note(float(x), float(y), where)
    elif x != y:
        problems.append("%s: %r vs %r" % (where, x, y))


COMPONENTS = {5120: "b", 5121: "B", 5122: "h", 5123: "H", 5125: "I", 5126: "f"}
SIZES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}


def compare_glb(a, b, name):
    da, ba = glb(a)
    db, bb = glb(b)
    compare_json(da, db, name + " json")
    if len(ba) != len(bb):
        problems.append("%s: binary chunks of %d and %d bytes" % (name, len(ba), len(bb)))
        return
    fitted = set()
    for mesh in da.get("meshes", []):
        for prim in mesh.get("primitives", []):
            for key in ("JOINTS_0", "WEIGHTS_0"):
                if key in prim.get("attributes", {}):
                    fitted.add(prim["attributes"][key])
    for anim in da.get("animations", []):
        for sampler in anim.get("samplers", []):
            fitted.update((sampler.get("input"), sampler.get("output")))
    fitted.update(skin.get("inverseBindMatrices") for skin in da.get("skins", []))
    for i, acc in enumerate(da.get("accessors", [])):
        if "bufferView" not in acc or i in fitted:
            continue
        view = da["bufferViews"][acc["bufferView"]]
        code = COMPONENTS[acc["componentType"]]
        n = acc["count"] * SIZES[acc["type"]]
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        stride = view.get("byteStride", 0)
        width = SIZES[acc["type"]] * struct.calcsize(code)
        if stride and stride != width:
            continue
        x = struct.unpack_from("<%d%s" % (n, code), ba, start)
        y = struct.unpack_from("<%d%s" % (n, code), bb, start)
        if code == "f":
            floats(x, y, "%s accessor %d" % (name, i))
        elif x != y:
            problems.append("%s: accessor %d (integers) differs" % (name, i))


# ---- PMX --------------------------------------------------------------------------------------------------
class Cursor:
    def __init__(self, data):
        self.d, self.o = data, 0

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.d, self.o)
        self.o += struct.calcsize("<" + fmt)
        return v

    def text(self):
        (n,) = self.take("i")
        s = self.d[self.o:self.o + n]
        self.o += n
        return s


def pmx(data):
    """Vertices (all floats and indices), then faces, as two lists; the rest of the file as bytes."""
    c = Cursor(data)
    c.take("4sf")
    (n,) = c.take("B")
    g = c.take("%dB" % n)
    extra, vsize = g[1], g[2]
    idx = {1: "b", 2: "h", 4: "i"}
    for _ in range(4):
        c.text()
    (count,) = c.take("i")
    nums, ints = [], []
    for _ in range(count):
        nums += c.take("8f")
        nums += c.take("%df" % (4 * extra)) if extra else ()
        (kind,) = c.take("B")
        bone = idx[g[5]]
        if kind == 0:
            ints += c.take(bone)
        elif kind == 1:
            ints += c.take(bone * 2)
            nums += c.take("f")
        elif kind in (2, 4):
            ints += c.take(bone * 4)
            nums += c.take("4f")
        elif kind == 3:
            ints += c.take(bone * 2)
            nums += c.take("f")
            nums += c.take("9f")
        nums += c.take("f")
    (fc,) = c.take("i")
    faces = c.take({1: "%dB", 2: "%dH", 4: "%di"}[vsize] % fc)
    return nums, list(ints) + list(faces), data[c.o:]


def compare_pmx(a, b, name):
    na, ia, ra = pmx(a)
    nb, ib, rb = pmx(b)
    if ia != ib:
        problems.append("%s: vertex weights' bones or faces differ" % name)
    floats(na, nb, name + " vertices")
    # textures, materials, bones, morphs, frames, bodies, joints: the same length; floats where bytes differ
    if len(ra) != len(rb):
        problems.append("%s: the sections after the faces are %d and %d bytes" % (name, len(ra), len(rb)))
        return
    compare_aligned(ra, rb, name + " after the faces")


def compare_aligned(ra, rb, where):
    """Same-length blocks whose differences must be floats: each differing 4-byte word read as one."""
    i = 0
    while i < len(ra):
        if ra[i] == rb[i]:
            i += 1
            continue
        # the float holding this byte: try the four words that contain it, take the closest reading
        best = None
        for s in range(max(0, i - 3), i + 1):
            if s + 4 > len(ra):
                continue
            (x,) = struct.unpack_from("<f", ra, s)
            (y,) = struct.unpack_from("<f", rb, s)
            if ra[:s] != rb[:s] and s < i - 3:
                continue
            if x == x and y == y and abs(x) > 1e-30 and (best is None or abs(x - y) < abs(best[0] - best[1])):
                best = (x, y, s)
        if best is None:
            problems.append("%s: byte %d differs and is no float" % (where, i))
            return
        note(best[0], best[1], "%s byte %d" % (where, best[2]))
        i = best[2] + 4


# ---- text -------------------------------------------------------------------------------------------------
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def compare_text(a, b, name):
    ta, tb = a.decode("utf-8", "replace"), b.decode("utf-8", "replace")
    if NUMBER.sub("#", ta) != NUMBER.sub("#", tb):
        problems.append("%s: the text around the numbers differs" % name)
        return
    floats([float(x) for x in NUMBER.findall(ta)], [float(x) for x in NUMBER.findall(tb)], name)


BAKE = {"tol": TOL, "worst": 0.0, "raw": 0.0, "frames": 0}


def obj_vertices(path):
    out = []
    for line in open(path):
        if line.startswith("v "):
            out.extend(float(t) for t in line.split()[1:4])
    return out


def compare_bake(pa, pb, name):
    """The bake as a player shows it: both posed by the Linux plush at five frames."""
    import subprocess
    import tempfile
    pose = os.environ.get("PLUSH_POSE")
    va, vb = pa[:-4] + ".vmd", pb[:-4] + ".vmd"
    if not pose or not os.path.exists(va) or not os.path.exists(vb):
        problems.append("%s: no PLUSH_POSE or .vmd to pose it with" % name)
        return
    bones, _, _ = vmd(open(va, "rb").read())
    last = max((k[1] for k in bones), default=0)
    with tempfile.TemporaryDirectory() as tmp:
        for f in sorted({0, last // 4, last // 2, 3 * last // 4, last}):
            meshes = []
            for model, motion, side in ((pa, va, "a"), (pb, vb, "b")):
                out = os.path.join(tmp, "%s%d.obj" % (side, f))
                subprocess.run([pose, "pose", model, "--motion", motion, "--frame", str(f), "--mesh", out], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                meshes.append(obj_vertices(out))
            if len(meshes[0]) != len(meshes[1]):
                problems.append("%s frame %d: %d and %d vertices" % (name, f, len(meshes[0]), len(meshes[1])))
                continue
            for i, (x, y) in enumerate(zip(*meshes)):
                d = abs(x - y)
                if d > BAKE["worst"]:
                    BAKE["worst"] = d
                if not d <= BAKE["tol"]:
                    problems.append("%s posed at frame %d, number %d: %r vs %r (bake tolerance %g)" % (
                        name, f, i, x, y, BAKE["tol"]))
                    break
            BAKE["frames"] += 1


def compare_file(pa, pb, name):
    a, b = open(pa, "rb").read(), open(pb, "rb").read()
    if a == b:
        stats["identical"] += 1
        return
    stats["within"] += 1
    ext = os.path.splitext(name)[1].lower()
    partner = name[:-4] + ".pmx" if ext == ".vmd" else name[:-4] + ".vmd"
    is_bake = name[:-4].endswith("_plush") and os.path.exists(os.path.join(os.path.dirname(pa), os.path.basename(partner)))
    if is_bake:
        if ext == ".pmx":
            compare_bake(pa, pb, name)
        return
    try:
        {".vmd": compare_vmd, ".ply": compare_ply, ".glb": compare_glb, ".pmx": compare_pmx}.get(ext, compare_text)(
            a, b, name)
    except (struct.error, ValueError, KeyError, IndexError) as e:
        problems.append("%s: cannot read (%s)" % (name, e))


# ---- the summary ------------------------------------------------------------------------------------------
# timings (a line of them and the soft measure's own thread's below it, or "in 12.97 s"), and the count of
# warnings: the Wine run has no ffmpeg beside it and warns once more
TIMING = re.compile(r"^\s*warnings\s+\d+|^\s*per frame|the soft measure's tests|seconds")
SECONDS = re.compile(r"\bin [\d.]+ s\b")


def summary_lines(path, outdir):
    lines = []
    name = os.path.basename(os.path.normpath(outdir))
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        # the program's name, paths and timings are the platform's own
        if TIMING.search(line) or "preview" in line or "ffmpeg" in line:
            continue
        line = SECONDS.sub("in T s", line)
        lines.append(line.replace("\\", "/").replace("plush.exe", "plush").replace(name, "OUTDIR"))
    return lines


def compare_summary(la, lb, da, db):
    a, b = summary_lines(la, da), summary_lines(lb, db)
    rows = 0
    if len(a) != len(b):
        problems.append("summary: %d lines vs %d" % (len(a), len(b)))
    for x, y in zip(a, b):
        if NUMBER.sub("#", x) != NUMBER.sub("#", y):
            problems.append("summary: '%s' vs '%s'" % (x.strip(), y.strip()))
            continue
        for p, q in zip(NUMBER.findall(x), NUMBER.findall(y)):
            digits = len(p.split(".")[1]) if "." in p and "e" not in p.lower() else 0
            unit = 10.0 ** -digits
            if abs(float(p) - float(q)) > unit * 1.0001:
                problems.append("summary: '%s' vs '%s'" % (x.strip(), y.strip()))
                break
        rows += 1
    return rows


def main():
    if len(sys.argv) not in (3, 5):
        print(__doc__)
        return 2
    da, db = sys.argv[1], sys.argv[2]
    files = []
    for root, _, names in os.walk(da):
        for n in names:
            files.append(os.path.relpath(os.path.join(root, n), da))
    theirs = set()
    for root, _, names in os.walk(db):
        for n in names:
            theirs.add(os.path.relpath(os.path.join(root, n), db))
    # a preview needs ffmpeg, which the Windows side may lack: it is compared only when both have it
    # plush's own bookkeeping (.plush-set records file times) is the run's, not an output
    ours = {f for f in files if not f.startswith(("preview", ".plush"))}
    theirs = {f for f in theirs if not f.startswith(("preview", ".plush"))}
    if ours != theirs:
        problems.append("files differ: only Linux %s, only Windows %s" % (sorted(ours - theirs), sorted(theirs - ours)))
    if len(sys.argv) == 5:
        said = re.search(r"within ([\d.]+) units", open(sys.argv[3], encoding="utf-8", errors="replace").read())
        if said:
            BAKE["tol"] = float(said.group(1))
    for f in sorted(ours & theirs):
        if f.endswith(".mp4"):
            continue
        compare_file(os.path.join(da, f), os.path.join(db, f), f)
    rows = compare_summary(sys.argv[3], sys.argv[4], da, db) if len(sys.argv) == 5 else 0
    for p in problems[:40]:
        print("differs:", p)
    print("%d files: %d identical, %d compared number by number (%d numbers, largest difference %.3g at %s); "
          "bake posed at %d frames: largest difference %.3g (its tolerance %g); %d summary lines%s" % (
              len(ours & theirs), stats["identical"], stats["within"], stats["numbers"], worst["diff"], worst["where"],
              BAKE["frames"], BAKE["worst"], BAKE["tol"], rows, "" if not problems else "; %d problems" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
