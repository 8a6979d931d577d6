#!/usr/bin/env python3
"""A second implementation of the iki watermark, written from docs/watermark.md
alone (plain Python, no dependencies), to check that the document is precise.

    python3 reference.py                      # the known-answer vector (doc section 10)
    python3 reference.py --iki-bin PATH       # also compare with the Rust crate on random
                                              # textures, through bench's pipe server
"""
from __future__ import annotations

import argparse
import json
import math
import random
import struct
import subprocess

MASK = 0xFFFFFFFF


# Section 3: ChaCha8, 64-bit counter in words 12-13, 64-bit nonce (the row) in 14-15.
def chacha8_block(key: bytes, counter: int, nonce: int) -> bytes:
    s = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574, *struct.unpack("<8I", key),
         counter & MASK, counter >> 32, nonce & MASK, nonce >> 32]
    x = list(s)

    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & MASK; x[d] ^= x[a]; x[d] = ((x[d] << 16) | (x[d] >> 16)) & MASK
        x[c] = (x[c] + x[d]) & MASK; x[b] ^= x[c]; x[b] = ((x[b] << 12) | (x[b] >> 20)) & MASK
        x[a] = (x[a] + x[b]) & MASK; x[d] ^= x[a]; x[d] = ((x[d] << 8) | (x[d] >> 24)) & MASK
        x[c] = (x[c] + x[d]) & MASK; x[b] ^= x[c]; x[b] = ((x[b] << 7) | (x[b] >> 25)) & MASK

    for _ in range(4):
        qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15)
        qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14)
    return struct.pack("<16I", *[(a + b) & MASK for a, b in zip(x, s)])


def row_stream(key: bytes, y: int, width: int):
    """Section 3 and 4: the row's permutation and its chips (+1/-1 per pixel)."""
    need = 320 + (width + 7) // 8
    ks = b"".join(chacha8_block(key, c, y) for c in range((need + 63) // 64))
    w = struct.unpack("<79I", ks[:316])
    perm = list(range(80))
    for k in range(79, 0, -1):
        j = (w[79 - k] * (k + 1)) >> 32
        perm[k], perm[j] = perm[j], perm[k]
    chips = [1 if (ks[320 + x // 8] >> (x % 8)) & 1 else -1 for x in range(width)]
    return perm, chips


def crc16(data: bytes) -> int:
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def payload_signs(license_id: int):
    """Section 2: 80 signs, id big-endian then CRC big-endian, MSB first."""
    raw = license_id.to_bytes(8, "big")
    data = raw + crc16(raw).to_bytes(2, "big")
    return [1 if (data[i // 8] >> (7 - i % 8)) & 1 else -1 for i in range(80)]


def embed(key: bytes, license_id: int, width: int, height: int, rgba: bytearray) -> None:
    """Section 5."""
    b = payload_signs(license_id)
    for y in range(height):
        perm, chips = row_stream(key, y, width)
        for x in range(width):
            o = 4 * (y * width + x)
            if rgba[o + 3] < 8:
                continue
            d = chips[x] * b[perm[x % 80]]
            for c in range(3):
                rgba[o + c] = min(255, max(0, rgba[o + c] + 2 * d))


def detect(key: bytes, width: int, height: int, rgba: bytes):
    """Sections 6 and 7. Returns (found id or None, confidence, z list)."""
    def s(x, y):
        if 0 <= x < width and 0 <= y < height and rgba[4 * (y * width + x) + 3] >= 8:
            o = 4 * (y * width + x)
            return rgba[o] + rgba[o + 1] + rgba[o + 2]
        return None

    C, Q = [0] * 80, [0] * 80
    for y in range(height):
        perm, chips = row_stream(key, y, width)
        for x in range(width):
            centre = s(x, y)
            if centre is None:
                continue
            nb = [v for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dx, dy) != (0, 0)
                  for v in [s(x + dx, y + dy)] if v is not None]
            h = max(-24, min(24, len(nb) * centre - sum(nb)))
            i = perm[x % 80]
            C[i] += chips[x] * h
            Q[i] += h * h
    z = [c / math.sqrt(q) if q > 0 else 0.0 for c, q in zip(C, Q)]
    confidence = (sum(abs(v) for v in z) - 80 * math.sqrt(2 / math.pi)) / math.sqrt(80 * (1 - 2 / math.pi))
    bits = [1 if v > 0 else 0 for v in z]
    mags = sorted((abs(v) for v in z), reverse=True)
    balanced = mags[-1] >= 0.5 * sum(mags[:40]) / 40 - 3.0
    found = decode_correcting(bits, z) if confidence >= 10 and balanced else None
    return found, confidence, z


def decode_correcting(bits, z):
    """Section 7.3: the id whose CRC holds after flipping a subset of the 3 weakest bits."""
    weakest = sorted(range(80), key=lambda i: (abs(z[i]), i))[:3]
    for mask in sorted(range(8), key=lambda m: bin(m).count("1")):
        flipped = list(bits)
        for k, i in enumerate(weakest):
            if mask >> k & 1:
                flipped[i] ^= 1
        data = bytes(int("".join(map(str, flipped[8 * k: 8 * k + 8])), 2) for k in range(10))
        if crc16(data[:8]) == int.from_bytes(data[8:], "big"):
            return int.from_bytes(data[:8], "big")
    return None


KAT_IN = ("3c1ec3074623b908ffffffff000000ff64329bff6e3791ff783c87ff82417dff8c4673ff964b69ffa0505fffaa5555ff"
          "4120beff4b25b4ff552aaaff5f2fa0ff693496ff73398cff7d3e82ff874378ff91486eff9b4d64ffa5525affaf5750ff")
KAT_OUT = ("3c1ec3074825bb08fdfdfdff000000ff623099ff6c358fff763a85ff84437fff8a4471ff984d6bffa25261ffac5757ff"
           "4322c0ff4d27b6ff572cacff5d2d9eff6b3698ff71378aff7f4084ff89457aff934a70ff994b62ffa7545cffb15952ff")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iki-bin")
    args = ap.parse_args()
    assert crc16(b"123456789") == 0x29B1
    img = bytearray.fromhex(KAT_IN)
    embed(bytes(range(32)), 0x0123456789ABCDEF, 12, 2, img)
    assert img.hex() == KAT_OUT, img.hex()
    print("known-answer vector: ok")
    if not args.iki_bin:
        return
    proc = subprocess.Popen([args.iki_bin], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    rng = random.Random(1)
    for n in range(6):
        w, h = rng.randint(80, 190), rng.randint(60, 120)
        key = bytes(rng.randrange(256) for _ in range(32))
        lic = rng.getrandbits(64)
        px = bytearray()
        for y in range(h):
            for x in range(w):
                a = 0 if (x // 17 + y // 13) % 4 == 0 else rng.choice([3, 7, 8, 9, 128, 255, 255, 255])
                px += bytes([(x * 3 + y) % 256, (40 + (x // 9) * 20) % 256, rng.randrange(256) if a == 0 else 200, a])
        ours = bytearray(px)
        embed(key, lic, w, h, ours)
        proc.stdin.write(f"embed {w} {h} {lic} {key.hex()}\n".encode() + bytes(px))
        proc.stdin.flush()
        assert proc.stdout.readline() == b"ok\n"
        theirs = proc.stdout.read(w * h * 4)
        assert theirs == bytes(ours), f"embed differs on case {n}"
        wrong = bytes(rng.randrange(256) for _ in range(32))
        reads = []
        for k in (key, wrong):
            found, conf, _ = detect(k, w, h, ours)
            proc.stdin.write(f"detect {w} {h} {k.hex()}\n".encode() + bytes(ours))
            proc.stdin.flush()
            d = json.loads(proc.stdout.readline())
            rust_found = None if d["found"] is None else int(d["found"])
            assert rust_found == found and abs(d["confidence"] - conf) < 1e-3, (d, found, conf)
            reads.append(f"found={found == lic} confidence {conf:.1f}")
        assert reads[0].startswith("found=True") and not reads[1].startswith("found=True")
        print(f"case {n}: {w}x{h} embed identical; reads identical: right key {reads[0]}, wrong key {reads[1]}")
    proc.stdin.close()
    proc.wait()


if __name__ == "__main__":
    main()
