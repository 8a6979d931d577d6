//! Pipe server for `bench.py`: one command line on stdin, then raw bytes.
//!
//! ```text
//! embed  <width> <height> <license_id> <key hex>\n <w*h*4 bytes>  ->  "ok\n" <w*h*4 bytes>
//! detect <width> <height> <key hex>\n <w*h*4 bytes>               ->  one JSON line
//! speed  <side>\n                                                  ->  one JSON line
//! ```
//! Errors are answered with `{"error": "..."}` and the server keeps going.
#![forbid(unsafe_code)]

use std::io::{self, BufRead, Read, Write};
use std::time::Instant;

use iki_watermark::{detect, embed_image, embed_rows, Detection, WatermarkKey};

fn parse_key(hex: &str) -> Result<WatermarkKey, String> {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| hex.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
        .collect::<Option<_>>()
        .ok_or("bad key hex")?;
    let key: [u8; 32] = bytes.try_into().map_err(|_| "key must be 32 bytes")?;
    Ok(WatermarkKey::from_bytes(key))
}

fn num<T: std::str::FromStr>(s: Option<&str>) -> Result<T, String> {
    s.and_then(|v| v.parse().ok()).ok_or_else(|| "bad number".to_string())
}

fn read_pixels(input: &mut impl Read, w: u32, h: u32) -> Result<Vec<u8>, String> {
    let mut buf = vec![0u8; w as usize * h as usize * 4];
    input.read_exact(&mut buf).map_err(|e| e.to_string())?;
    Ok(buf)
}

fn detection_json(d: &Detection, seconds: f64) -> String {
    let bits: String = d.bit_confidence.iter().map(|z| if *z > 0.0 { '1' } else { '0' }).collect();
    let found = d.found.map_or("null".to_string(), |id| format!("\"{id}\""));
    format!(
        "{{\"found\":{found},\"confidence\":{:.3},\"weakest\":{:.3},\"crc_ok\":{},\"visible\":{},\"bits\":\"{bits}\",\"seconds\":{seconds:.6}}}",
        d.confidence, d.weakest_bit, d.crc_ok, d.visible_pixels
    )
}

/// Embed and detect timings on a synthetic `side x side` texture (60 % visible),
/// embedding in 1 MiB row bands like the license service.
fn speed(side: u32) -> String {
    let key = WatermarkKey::from_bytes([0x5A; 32]); // obviously fake
    let mut original = Vec::with_capacity(side as usize * side as usize * 4);
    for y in 0..side {
        for x in 0..side {
            let tile = (x / 97) * 31 + (y / 89) * 17;
            let a = if (x / 97 + y / 89) % 5 < 3 { 255 } else { 0 };
            original.extend_from_slice(&[(tile * 7) as u8, (tile * 13 + y / 64) as u8, (x / 32) as u8, a]);
        }
    }
    let band_rows = ((1usize << 20) / (side as usize * 4)).max(1);
    let mut image = original.clone();
    let mut embed_s = f64::MAX;
    for _ in 0..5 {
        image.copy_from_slice(&original);
        let t = Instant::now();
        for (i, band) in image.chunks_mut(band_rows * side as usize * 4).enumerate() {
            let _ = embed_rows(&key, 99, side, (i * band_rows) as u32, band);
        }
        embed_s = embed_s.min(t.elapsed().as_secs_f64());
    }
    let mut detect_s = f64::MAX;
    let mut ok = false;
    for _ in 0..3 {
        let t = Instant::now();
        ok = detect(&key, side, side, &image).map(|d| d.found == Some(99)).unwrap_or(false);
        detect_s = detect_s.min(t.elapsed().as_secs_f64());
    }
    let mp = f64::from(side) * f64::from(side) / 1e6;
    format!(
        "{{\"side\":{side},\"band_rows\":{band_rows},\"embed_ms\":{:.1},\"embed_mp_per_s\":{:.0},\"detect_ms\":{:.1},\"read_ok\":{ok}}}",
        embed_s * 1e3,
        mp / embed_s,
        detect_s * 1e3
    )
}

fn handle(line: &str, input: &mut impl Read, out: &mut impl Write) -> Result<(), String> {
    let mut words = line.split_whitespace();
    match words.next() {
        Some("embed") => {
            let (w, h, id): (u32, u32, u64) = (num(words.next())?, num(words.next())?, num(words.next())?);
            let key = parse_key(words.next().ok_or("missing key")?)?;
            let mut px = read_pixels(input, w, h)?;
            embed_image(&key, id, w, h, &mut px).map_err(|e| e.to_string())?;
            out.write_all(b"ok\n").and_then(|()| out.write_all(&px)).map_err(|e| e.to_string())
        }
        Some("detect") => {
            let (w, h): (u32, u32) = (num(words.next())?, num(words.next())?);
            let key = parse_key(words.next().ok_or("missing key")?)?;
            let px = read_pixels(input, w, h)?;
            let t = Instant::now();
            let d = detect(&key, w, h, &px).map_err(|e| e.to_string())?;
            writeln!(out, "{}", detection_json(&d, t.elapsed().as_secs_f64())).map_err(|e| e.to_string())
        }
        Some("speed") => writeln!(out, "{}", speed(num(words.next())?)).map_err(|e| e.to_string()),
        _ => Err(format!("unknown command {line:?}")),
    }
}

fn main() {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Err(e) = handle(line.trim(), &mut input, &mut out) {
            let _ = writeln!(out, "{{\"error\":{e:?}}}");
        }
        let _ = out.flush();
    }
}
