#!/usr/bin/env python3
"""Robustness benchmark of the iki watermark, side by side with the PyPI
packages invisible-watermark (dwtDct, dwtDctSvd) and blind-watermark.

Run through run.sh, which builds the Rust pipe server (iki-bench/) and the
virtualenv. Every method marks the same textures with the same random 64-bit
payloads; every attack is applied here, with Pillow and numpy, to each
method's marked copy, and the method then reads the attacked pixels blind.
Nothing is written to disk except out/results.json and RESULTS.md.
"""
from __future__ import annotations

import argparse
import io
import json
import math
import os
import platform
import subprocess
import sys
import time
import types
import zlib
from importlib import metadata
from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "textures"
KEY_A = b"fake-bench-watermark-key-A-00000".hex()  # obviously fake
VISIBLE = 8
LARGE_PIXELS = 1_000_000

ATLASES = {
    "complete 4096x2048": "kenney-platformer-pack-redux_spritesheet_complete.png",
    "players 1024x2048": "kenney-platformer-pack-redux_spritesheet_players.png",
    "tiles 1988x1470": "kenney-top-down-shooter_spritesheet_tiles.png",
    "tilesheet 3456x2560": "kenney-top-down-shooter_tilesheet_complete_2X.png",
}


# --------------------------------------------------------------------------
# Textures
# --------------------------------------------------------------------------

def load_png(name: str) -> np.ndarray:
    with Image.open(FIXTURES / name) as im:
        return np.array(im.convert("RGBA"))


def paint_disc(img, cx, cy, r, colour, alpha=None):
    """Anti-aliased disc: blends colour (and optionally sets alpha by coverage)."""
    h, w = img.shape[:2]
    y, x = np.mgrid[0:h, 0:w]
    cov = np.clip(r - np.hypot(x - cx, y - cy) + 0.5, 0.0, 1.0)[..., None]
    img[..., :3] = np.round(img[..., :3] * (1 - cov) + np.array(colour) * cov).astype(np.uint8)
    if alpha is not None:
        img[..., 3] = np.maximum(img[..., 3], np.round(cov[..., 0] * alpha).astype(np.uint8))


def art(w: int, h: int, seed: int) -> np.ndarray:
    """Flat-colour vector-style art: gradient background, rectangles, discs."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.zeros((h, w, 4), np.uint8)
    img[..., 0] = 40 + x * 100 // w
    img[..., 1] = 60 + y * 80 // h
    img[..., 2] = 150
    img[..., 3] = 255
    for _ in range(12):
        x0, y0 = rng.integers(0, w), rng.integers(0, h)
        x1, y1 = x0 + rng.integers(1, w // 2 + 2), y0 + rng.integers(1, h // 2 + 2)
        img[y0:y1, x0:x1, :3] = rng.integers(0, 256, 3)
    for _ in range(6):
        paint_disc(img, rng.uniform(0, w), rng.uniform(0, h), rng.uniform(3, w / 4), rng.integers(0, 256, 3))
    return img


def sprites(w: int, h: int, seed: int, visible_share: float, bleed: bool) -> np.ndarray:
    """Anti-aliased sprites on a transparent sheet, RGB 0 or bled under alpha 0."""
    rng = np.random.default_rng(seed)
    img = np.zeros((h, w, 4), np.uint8)
    while (img[..., 3] >= VISIBLE).mean() < visible_share:
        paint_disc(img, rng.uniform(0, w), rng.uniform(0, h), rng.uniform(6, w / 10), rng.integers(0, 256, 3), 255)
    if bleed:
        # Colour under transparent pixels, as Live2D/Cubism exports have: a
        # smooth field plus the sprites' own colour spread outwards.
        y, x = np.mgrid[0:h, 0:w]
        field = np.stack([128 + 100 * np.sin(x / 37.0), 128 + 100 * np.cos(y / 23.0), (x + y) % 256], -1)
        hidden = img[..., 3] == 0
        img[hidden, :3] = field[hidden].astype(np.uint8)
    return img


def generated() -> dict[str, np.ndarray]:
    white = art(256, 256, 5)
    white[:, : int(256 * 0.7), :3] = 255  # 70 % pure white
    flat = np.zeros((256, 256, 4), np.uint8)
    flat[...] = (90, 160, 200, 255)
    return {
        "art 256x256": art(256, 256, 1),
        "art 64x64": art(64, 64, 2),
        "10% visible 512x512": sprites(512, 512, 3, 0.10, bleed=False),
        "flat colour 256x256": flat,
        "white areas 256x256": white,
        "RGB bleed 512x512": sprites(512, 512, 4, 0.35, bleed=True),
    }


# --------------------------------------------------------------------------
# Attacks: each takes (rgba, ctx) and returns RGBA (maybe another size)
# --------------------------------------------------------------------------

def rgb_map(rgba, f):
    """Applies a per-level tone curve to R, G, B (rounded, clamped) via a table."""
    lut = np.clip(np.round(f(np.arange(256, dtype=np.float64))), 0, 255).astype(np.uint8)
    out = rgba.copy()
    out[..., :3] = lut[rgba[..., :3]]
    return out


def via_pillow(rgba, fmt, **kw):
    buf = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buf, fmt, **kw)
    buf.seek(0)
    with Image.open(buf) as im:
        return np.array(im.convert("RGBA"))


def jpeg(rgba, quality, subsampling):
    """JPEG has no alpha: the straight RGB is encoded (what dropping alpha
    gives), and the decoded colour gets the original alpha back, as a pipeline
    that ships the alpha separately would."""
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgba[..., :3]), "RGB").save(buf, "JPEG", quality=quality, subsampling=subsampling)
    buf.seek(0)
    with Image.open(buf) as im:
        out = rgba.copy()
        out[..., :3] = np.array(im.convert("RGB"))
        return out


def zero_hidden(rgba, _ctx):
    out = rgba.copy()
    out[rgba[..., 3] == 0, :3] = 0
    return out


def premultiply(rgba, _ctx):
    """8-bit premultiplied storage and back, each step rounded to nearest."""
    a = rgba[..., 3:4].astype(np.uint32)
    pre = (rgba[..., :3].astype(np.uint32) * a + 127) // 255
    back = np.where(a > 0, (pre * 255 + a // 2) // np.maximum(a, 1), 0)
    out = rgba.copy()
    out[..., :3] = np.minimum(back, 255).astype(np.uint8)
    return out


def noise(sigma):
    def attack(rgba, ctx):
        out = rgba.copy()
        n = ctx["rng"].standard_normal(rgba[..., :3].shape, dtype=np.float32) * sigma
        out[..., :3] = np.clip(np.round(rgba[..., :3] + n), 0, 255).astype(np.uint8)
        return out
    return attack


def resize90(rgba, _ctx):
    h, w = rgba.shape[:2]
    return np.array(Image.fromarray(rgba, "RGBA").resize((max(1, round(w * 0.9)), max(1, round(h * 0.9))), Image.BILINEAR))


def crop(rgba, _ctx):
    h, w = rgba.shape[:2]
    dy, dx = max(1, h // 20), max(1, w // 20)
    return np.ascontiguousarray(rgba[dy : h - dy, dx : w - dx])


def resize_to(scale):
    """Aspect-preserving resize (Pillow's default bicubic), read at the new size."""
    def attack(rgba, _ctx):
        h, w = rgba.shape[:2]
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        return np.array(Image.fromarray(rgba, "RGBA").resize(size, Image.BICUBIC))
    return attack


def crop_area(share):
    """A crop keeping `share` of the area (same aspect), at a random place."""
    def attack(rgba, ctx):
        h, w = rgba.shape[:2]
        cw, ch = max(1, round(w * share ** 0.5)), max(1, round(h * share ** 0.5))
        x, y = int(ctx["rng"].integers(0, w - cw + 1)), int(ctx["rng"].integers(0, h - ch + 1))
        return np.ascontiguousarray(rgba[y : y + ch, x : x + cw])
    return attack


def then_jpeg(first, quality=85):
    return lambda r, c: jpeg(first(r, c), quality, 2)


def shift1(rgba, _ctx):
    out = np.roll(rgba, 1, axis=1)
    out[:, 0] = rgba[:, 0]
    return out


def average(rgba, ctx):
    other = ctx["other"]()
    return ((rgba.astype(np.uint16) + other + 1) // 2).astype(np.uint8)


ATTACKS = [
    ("none", lambda r, c: r, True),
    ("PNG re-encode", lambda r, c: via_pillow(r, "PNG", compress_level=1), True),
    ("WebP lossless", lambda r, c: via_pillow(r, "WEBP", lossless=True, quality=0, method=0), True),
    ("RGB zeroed under alpha 0", zero_hidden, True),
    ("premultiply round trip", premultiply, True),
    ("brightness x0.9", lambda r, c: rgb_map(r, lambda v: v * 0.9), True),
    ("brightness x1.1", lambda r, c: rgb_map(r, lambda v: v * 1.1), True),
    ("brightness +10", lambda r, c: rgb_map(r, lambda v: v + 10), True),
    ("brightness -10", lambda r, c: rgb_map(r, lambda v: v - 10), True),
    ("contrast 0.8", lambda r, c: rgb_map(r, lambda v: (v - 128) * 0.8 + 128), True),
    ("contrast 1.2", lambda r, c: rgb_map(r, lambda v: (v - 128) * 1.2 + 128), True),
    ("gamma 0.9", lambda r, c: rgb_map(r, lambda v: 255 * (v / 255) ** 0.9), True),
    ("gamma 1.1", lambda r, c: rgb_map(r, lambda v: 255 * (v / 255) ** 1.1), True),
    ("noise sigma 1", noise(1), True),
    ("noise sigma 2", noise(2), True),
    ("noise sigma 4", noise(4), True),
    *[(f"JPEG q{q} {name}", (lambda q, s: lambda r, c: jpeg(r, q, s))(q, s), True)
      for name, s in (("4:4:4", 0), ("4:2:0", 2)) for q in (95, 90, 85, 75)],
    # Geometric attacks: iki's identify registers the leak on the original texture (blind
    # first; docs/watermark.md section 11); the peers read blind, as they can only.
    ("resize 50%", resize_to(0.5), True),
    ("resize 75%", resize_to(0.75), True),
    ("resize 90%", resize_to(0.9), True),
    ("resize 125%", resize_to(1.25), True),
    ("resize 200%", resize_to(2.0), True),
    ("crop to 60% of the area", crop_area(0.6), True),
    ("crop to 50% of the area", crop_area(0.5), True),
    ("crop to 30% of the area", crop_area(0.3), True),
    ("resize 90% + JPEG q85 4:2:0", then_jpeg(resize_to(0.9)), True),
    ("crop to 50% + JPEG q85 4:2:0", then_jpeg(crop_area(0.5)), True),
    ("resize 90% (control)", resize90, False),
    ("crop 5% each side (control)", crop, False),
    ("1-px shift (control)", shift1, False),
    ("average of 2 licences (control)", average, False),
]


# --------------------------------------------------------------------------
# Methods
# --------------------------------------------------------------------------

def id_bits(license_id: int) -> np.ndarray:
    return np.array([(license_id >> (63 - i)) & 1 for i in range(64)], np.uint8)


def bits_id(bits) -> int:
    return int("".join("1" if b else "0" for b in bits), 2)


class Iki:
    name = "iki"

    def __init__(self, binary: Path):
        self.proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def _send(self, line: str, rgba: np.ndarray | None = None):
        self.proc.stdin.write(line.encode() + b"\n")
        if rgba is not None:
            self.proc.stdin.write(np.ascontiguousarray(rgba, np.uint8).tobytes())
        self.proc.stdin.flush()
        return self.proc.stdout.readline().decode()

    def embed(self, rgba, license_id, key=KEY_A):
        h, w = rgba.shape[:2]
        reply = self._send(f"embed {w} {h} {license_id} {key}", rgba)
        if not reply.startswith("ok"):
            raise RuntimeError(reply)
        return np.frombuffer(self.proc.stdout.read(w * h * 4), np.uint8).reshape(h, w, 4).copy()

    def read(self, rgba, key=KEY_A):
        h, w = rgba.shape[:2]
        d = json.loads(self._send(f"detect {w} {h} {key}", rgba))
        if "error" in d:
            raise RuntimeError(d["error"])
        found = None if d["found"] is None else int(d["found"])
        return found, np.array([c == "1" for c in d["bits"][:64]], np.uint8), d["confidence"]

    def set_original(self, rgba):
        """The unmarked texture identify registers leaks on (the master's texture)."""
        h, w = rgba.shape[:2]
        if not self._send(f"original {w} {h}", rgba).startswith("ok"):
            raise RuntimeError("original refused")
        self.original = rgba

    def identify(self, rgba, key=KEY_A):
        """The service's identify: blind, then registered on the original. Returns the read
        and the whole answer (method, registration, seconds)."""
        h, w = rgba.shape[:2]
        answer = json.loads(self._send(f"identify {w} {h} {key}", rgba))
        if "error" in answer:
            raise RuntimeError(answer["error"])
        d = answer["read"]
        found = None if d["found"] is None else int(d["found"])
        return (found, np.array([c == "1" for c in d["bits"][:64]], np.uint8), d["confidence"]), answer

    def register(self, rgba, key=KEY_A):
        h, w = rgba.shape[:2]
        return json.loads(self._send(f"register {w} {h} {key}", rgba))

    def null_read(self, key):
        d = json.loads(self._send(f"nullread {key}"))
        if "error" in d:
            raise RuntimeError(d["error"])
        return d

    def speed(self, side=4096):
        return json.loads(self._send(f"speed {side}"))


def bgr(rgba):
    return np.ascontiguousarray(rgba[..., 2::-1])


def with_bgr(rgba, out_bgr):
    out = rgba.copy()
    out[..., :3] = np.clip(np.round(np.asarray(out_bgr, np.float64)[..., ::-1]), 0, 255).astype(np.uint8)
    return out


class InvisibleWatermark:
    """invisible-watermark's frequency methods on the RGB (via BGR) planes; the
    alpha plane is kept from the original."""

    def __init__(self, method):
        from imwatermark import WatermarkDecoder, WatermarkEncoder
        self.enc, self.dec, self.method, self.name = WatermarkEncoder, WatermarkDecoder, method, f"imwatermark {method}"

    def embed(self, rgba, license_id):
        enc = self.enc()
        enc.set_watermark("bits", [int(b) for b in id_bits(license_id)])
        return with_bgr(rgba, enc.encode(bgr(rgba), self.method))

    def read(self, rgba):
        bits = np.array(self.dec("bits", 64).decode(bgr(rgba), self.method), np.uint8)
        return bits_id(bits), bits, None


class BlindWatermark:
    name = "blind-watermark"

    def __init__(self):
        import blind_watermark
        blind_watermark.bw_notes.close()
        self.cls = blind_watermark.WaterMark

    def embed(self, rgba, license_id):
        bwm = self.cls(password_img=1, password_wm=1, processes=1)
        bwm.read_img(img=bgr(rgba))
        bwm.read_wm([bool(b) for b in id_bits(license_id)], mode="bit")
        return with_bgr(rgba, bwm.embed())

    def read(self, rgba):
        wm = self.cls(password_img=1, password_wm=1, processes=1).extract(embed_img=bgr(rgba), wm_shape=64, mode="bit")
        bits = (np.asarray(wm) > 0.5).astype(np.uint8)
        return bits_id(bits), bits, None


def load_competitors(names):
    # invisible-watermark imports torch at module level for its rivaGan method,
    # which is not benchmarked; a stub module stands in so torch (and its
    # multi-gigabyte CUDA wheels) need not be installed.
    sys.modules.setdefault("torch", types.ModuleType("torch"))
    out = []
    for n in names:
        if n == "dwtDct":
            out.append(InvisibleWatermark("dwtDct"))
        elif n == "dwtDctSvd":
            out.append(InvisibleWatermark("dwtDctSvd"))
        elif n == "blind":
            out.append(BlindWatermark())
    return out


# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------

def psnr_visible(a, b):
    vis = a[..., 3] >= VISIBLE
    if not vis.any():
        return None
    d = a[vis, :3].astype(np.float64) - b[vis, :3]
    mse = float((d * d).mean())
    return math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def run_texture(method, tex_name, rgba, n_ids, rng, attacks, log):
    rows = {a: {"exact": 0, "wrong": 0, "bit_acc": [], "conf": [], "n": 0} for a, _, _ in attacks}
    psnrs, t_embed, t_read, n_read = [], 0.0, 0.0, 0
    if isinstance(method, Iki):
        method.set_original(rgba)
    for k in range(n_ids):
        lic, other_lic = int(rng.integers(0, 2**63)) * 2 + int(rng.integers(0, 2)), int(rng.integers(0, 2**63))
        try:
            t = time.perf_counter()
            marked = method.embed(rgba, lic)
            t_embed += time.perf_counter() - t
        except Exception as e:  # too small, capacity exceeded, ...
            return {"error": f"{type(e).__name__}: {str(e)[:120]}"}
        psnrs.append(psnr_visible(rgba, marked))
        other_cache = []

        def other():
            if not other_cache:
                other_cache.append(method.embed(rgba, other_lic))
            return other_cache[0]

        ctx = {"rng": np.random.default_rng(k), "other": other}
        for a_name, fn, _ in attacks:
            attacked = fn(marked, ctx)
            allowed = {lic, other_lic} if fn is average else {lic}
            try:
                t = time.perf_counter()
                if isinstance(method, Iki):
                    # What the service does: blind, then registered on the original.
                    (found, bits, conf), answer = method.identify(attacked)
                    if answer["method"] == "registered":
                        rows[a_name].setdefault("identify_s", []).append(answer["read"]["seconds"])
                else:
                    found, bits, conf = method.read(attacked)
                t_read += time.perf_counter() - t
                n_read += 1
            except Exception:
                found, bits, conf = None, None, None
            r = rows[a_name]
            r["n"] += 1
            r["exact"] += found in allowed
            r["wrong"] += found is not None and found not in allowed
            if bits is not None:
                r["bit_acc"].append(float((bits == id_bits(lic)).mean()))
            if conf is not None:
                r["conf"].append(conf)
        log(f"  {method.name:22s} {tex_name:22s} id {k + 1}/{n_ids}")
    finite = [p for p in psnrs if p is not None and math.isfinite(p)]
    return {
        "ids": n_ids,
        "psnr_visible_db": sum(finite) / len(finite) if finite else None,
        "embed_s_per_mp": t_embed / n_ids / (rgba.shape[0] * rgba.shape[1] / 1e6),
        "read_s_per_mp": t_read / max(1, n_read) / (rgba.shape[0] * rgba.shape[1] / 1e6),
        "attacks": {
            a: {
                "n": r["n"],
                "exact_rate": r["exact"] / r["n"] if r["n"] else None,
                "wrong_ids": r["wrong"],
                "bit_acc": sum(r["bit_acc"]) / len(r["bit_acc"]) if r["bit_acc"] else None,
                "mean_conf": sum(r["conf"]) / len(r["conf"]) if r["conf"] else None,
                "identify_s": r.get("identify_s", []),
            }
            for a, r in rows.items()
        },
    }


def false_accepts(iki, textures, reads, rng, log):
    """Reads that must find nothing: unmarked textures under random keys, and
    marked (key A) or marked-then-JPEG copies read under random keys."""
    names = list(textures)
    found, confs, total = 0, [], 0
    for i in range(reads):
        name = names[i % len(names)]
        rgba = textures[name]
        key = rng.bytes(32).hex()
        kind = (i // len(names)) % 3
        if kind == 1:
            rgba = iki.embed(rgba, int(rng.integers(0, 2**63)))
        elif kind == 2:
            rgba = jpeg(iki.embed(rgba, int(rng.integers(0, 2**63))), 90, 2)
        f, _, conf = iki.read(rgba, key)
        found += f is not None
        confs.append(conf)
        total += 1
        if i % 100 == 99:
            log(f"  false-accept reads {i + 1}/{reads}")
    c = np.array(confs)
    return {"reads": total, "found": found, "conf_median": float(np.median(c)),
            "conf_p99": float(np.percentile(c, 99)), "conf_max": float(c.max()), "conf_over_5": int((c > 5).sum())}


def registered_null_reads(iki, textures, unrelated, per_registration, rng, log):
    """Null reads after registration: leaks that must read nothing are registered on a
    texture (image content only, so the registration does not depend on the key) and the
    registration is then read under random keys. Leaks: each texture unmarked and resized or
    cropped; each texture marked under another master's key, resized; random crops of
    unrelated images (the other textures), which mostly do not register at all."""
    names = list(textures)
    reads = found = 0
    confs, registered, unregistered = [], 0, 0
    other_key = rng.bytes(32).hex()
    for i, name in enumerate(names):
        rgba = textures[name]
        iki.set_original(rgba)
        h, w = rgba.shape[:2]
        leaks = [
            ("unmarked, resized 90%", resize_to(0.9)(rgba, None)),
            ("unmarked, crop 50%", crop_area(0.5)(rgba, {"rng": rng})),
            ("another master's mark, resized 80% + JPEG 85", jpeg(resize_to(0.8)(iki.embed(rgba, int(rng.integers(0, 2**63)), other_key), None), 85, 2)),
        ]
        other = textures[names[(i + 1) % len(names)]]
        leaks.append(("crop of an unrelated image", crop_area(0.5)(other, {"rng": rng})))
        for label, leak in leaks:
            answer = iki.register(leak, other_key)
            if answer["registration"] is None:
                unregistered += 1
                continue
            registered += 1
            # Each read re-resamples the leak onto the texture: on the atlases, fewer keys.
            for _ in range(per_registration if h * w <= LARGE_PIXELS else min(per_registration, 50)):
                d = iki.null_read(rng.bytes(32).hex())
                reads += 1
                found += d["found"] is not None
                confs.append(d["confidence"])
            log(f"  null reads {name}: {label}: {reads} so far")
    c = np.array(confs) if confs else np.zeros(1)
    return {"reads": reads, "found": found, "registrations": registered, "not_registered": unregistered,
            "conf_median": float(np.median(c)), "conf_p99": float(np.percentile(c, 99)),
            "conf_max": float(c.max()), "conf_over_5": int((c > 5).sum())}


def identify_speed(iki, runs, log):
    """The service's identify on a 4096x4096 texture (the complete atlas over the tilesheet)
    after resize to 90 % + JPEG 85 and after a crop to half the area: seconds per request."""
    top = load_png(ATLASES["complete 4096x2048"])
    bottom = np.zeros_like(top)
    sheet = load_png(ATLASES["tilesheet 3456x2560"])[:2048]
    bottom[:, : sheet.shape[1]] = sheet
    big = np.ascontiguousarray(np.concatenate([top, bottom]))
    iki.set_original(big)
    rng = np.random.default_rng(11)
    seconds, exact = [], 0
    for k in range(runs):
        lic = int(rng.integers(0, 2**63))
        marked = iki.embed(big, lic)
        attack = then_jpeg(resize_to(0.9)) if k % 2 == 0 else crop_area(0.5)
        leak = attack(marked, {"rng": rng})  # the attack itself (Pillow resize, JPEG) is not timed
        t = time.perf_counter()
        (found, _, _), answer = iki.identify(leak)
        seconds.append(time.perf_counter() - t)
        exact += found == lic
        log(f"  identify 4096x4096 {k + 1}/{runs}: {seconds[-1]:.2f} s")
    s = np.array(seconds)
    return {"runs": runs, "exact": exact, "p50_s": float(np.percentile(s, 50)), "p95_s": float(np.percentile(s, 95)),
            "max_s": float(s.max())}


def versions():
    def ver(pkg):
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return "not installed"

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
    return {
        "cpu": cpu, "cores": os.cpu_count(), "os": platform.platform(), "python": platform.python_version(),
        "rustc": rustc, **{p: ver(p) for p in ("numpy", "Pillow", "opencv-python-headless", "PyWavelets", "invisible-watermark", "blind-watermark")},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iki-bin", required=True, type=Path)
    ap.add_argument("--out", default=HERE / "out", type=Path)
    ap.add_argument("--ids", type=int, default=20, help="random ids per texture (all methods)")
    ap.add_argument("--competitor-ids-large", type=int, default=2,
                    help="ids per texture above 1 MP for the Python methods (they take seconds per megapixel)")
    ap.add_argument("--competitors", default="dwtDct,dwtDctSvd,blind")
    ap.add_argument("--false-accept-reads", type=int, default=1200)
    ap.add_argument("--quick", action="store_true", help="smoke run: generated textures only, 2 ids")
    ap.add_argument("--textures", default="", help="comma-separated texture names to run (default: all)")
    ap.add_argument("--null-per-registration", type=int, default=300,
                    help="random keys read through each registration of a null leak")
    ap.add_argument("--identify-runs", type=int, default=20, help="identify requests timed on 4096x4096")
    ap.add_argument("--resume", action="store_true",
                    help="keep the textures already in <out>/results.json (an interrupted run) and add only the "
                         "false-accept reads, the null reads after registration and the identify timing")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731

    textures = generated()
    if not args.quick:
        textures = {**{k: load_png(v) for k, v in ATLASES.items()}, **textures}
    if args.textures:
        wanted = [t.strip() for t in args.textures.split(",")]
        textures = {k: v for k, v in textures.items() if any(k.split(" ")[0] == t.split(" ")[0] and k.startswith(t) for t in wanted)}
    ids = 2 if args.quick else args.ids
    iki = Iki(args.iki_bin)
    methods = [iki] + load_competitors([c for c in args.competitors.split(",") if c])
    results = {"versions": versions(), "ids": ids, "competitor_ids_large": args.competitor_ids_large,
               "attacks": [(a, ok) for a, _, ok in ATTACKS], "textures": {}, "methods": [m.name for m in methods]}
    log("speed (native, 4096x4096) ...")
    results["speed_native"] = iki.speed(4096)
    wasm = args.out / "wasm_speed.json"
    if wasm.exists():
        results["speed_wasm"] = json.loads(wasm.read_text())
    started = time.time()
    previous = args.out / "results.json"
    if args.resume and previous.exists():
        done = json.loads(previous.read_text())
        results["textures"] = done["textures"]
        results["speed_native"] = done.get("speed_native", results["speed_native"])
        started -= done.get("elapsed_s", 0)
    for t_name, rgba in textures.items():
        if args.resume:
            break
        h, w = rgba.shape[:2]
        entry = results["textures"][t_name] = {"width": w, "height": h,
                                               "visible_share": float((rgba[..., 3] >= VISIBLE).mean()), "methods": {}}
        for m in methods:
            n = ids if (m is iki or h * w <= LARGE_PIXELS) else min(ids, args.competitor_ids_large)
            rng = np.random.default_rng(zlib.crc32(t_name.encode()))  # same ids for every method
            entry["methods"][m.name] = run_texture(m, t_name, rgba, n, rng, ATTACKS, log)
            (args.out / "results.json").write_text(json.dumps(results, indent=1))
    log("false accepts ...")
    results["false_accepts"] = false_accepts(iki, textures, 120 if args.quick else args.false_accept_reads,
                                             np.random.default_rng(7), log)
    log("null reads after registration ...")
    results["registered_null_reads"] = registered_null_reads(
        iki, textures, None, args.null_per_registration, np.random.default_rng(8), log)
    if args.identify_runs > 0:
        log("identify on 4096x4096 ...")
        results["identify_speed"] = identify_speed(iki, args.identify_runs, log)
    results["elapsed_s"] = time.time() - started
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    from report import write_report
    write_report(results, args.out / "RESULTS.md")
    log(f"done in {results['elapsed_s']:.0f} s: {args.out / 'results.json'}, {args.out / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
