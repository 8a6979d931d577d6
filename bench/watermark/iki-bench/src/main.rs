//! Pipe server for `bench.py`: one command line on stdin, then raw bytes.
//!
//! ```text
//! embed  <width> <height> <license_id> <key hex>\n <w*h*4 bytes>  ->  "ok\n" <w*h*4 bytes>
//! detect <width> <height> <key hex>\n <w*h*4 bytes>               ->  one JSON line
//! speed  <side>\n                                                  ->  one JSON line
//! original <width> <height>\n <w*h*4 bytes>                        ->  "ok\n" (kept for identify)
//! identify <width> <height> <key hex>\n <w*h*4 bytes>             ->  one JSON line
//! register <width> <height>\n <w*h*4 bytes>                        ->  one JSON line
//! nullread <key hex>\n                                             ->  one JSON line
//! ```
//! `identify` is the service's identify: the blind read, then, when it finds nothing, the
//! informed read against the original set by `original` (docs/watermark.md section 11).
//! `register` registers a leak on the original with key A and keeps the leak and its best
//! registration; `nullread` reads that registration under another key (a null read).
//! Errors are answered with `{"error": "..."}` and the server keeps going.
#![forbid(unsafe_code)]

use std::io::{self, BufRead, Read, Write};
use std::time::Instant;

use iki_watermark::{
    detect, embed_image, embed_rows, read_informed, read_registered, Detection, Registration, Suspect, WatermarkKey,
};

/// What `original` and `register` keep between commands.
#[derive(Default)]
struct State {
    original: Option<(u32, u32, Vec<u8>)>,
    registered: Option<(Suspect, Registration)>,
}

/// Time budget of one `identify`, as the service's default.
const BUDGET_S: f64 = 10.0;

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

fn registration_json(r: Option<&Registration>) -> String {
    r.map_or("null".to_string(), |r| {
        format!(
            "{{\"scale_x\":{:.6},\"scale_y\":{:.6},\"offset_x\":{:.3},\"offset_y\":{:.3},\"similarity\":{:.4}}}",
            r.scale_x, r.scale_y, r.offset_x, r.offset_y, r.similarity
        )
    })
}

/// The service's identify on one leak: blind, then informed against the kept original.
fn identify(state: &State, key: &WatermarkKey, w: u32, h: u32, px: Vec<u8>) -> Result<String, String> {
    let t = Instant::now();
    let mut suspect = Suspect::new(w, h, px).map_err(|e| e.to_string())?;
    let blind = suspect.detect(key);
    if blind.found.is_some() {
        return Ok(format!("{{\"method\":\"blind\",\"registration\":null,\"read\":{}}}", detection_json(&blind, t.elapsed().as_secs_f64())));
    }
    let (tw, th, original) = state.original.as_ref().ok_or("no original")?;
    let deadline = Instant::now() + std::time::Duration::from_secs_f64(BUDGET_S);
    let read = read_informed(key, *tw, *th, original, &mut suspect, &mut || Instant::now() < deadline).map_err(|e| e.to_string())?;
    let seconds = t.elapsed().as_secs_f64();
    let detection = read.detection.unwrap_or(blind);
    Ok(format!(
        "{{\"method\":\"registered\",\"complete\":{},\"registration\":{},\"read\":{}}}",
        read.complete,
        registration_json(read.registration.as_ref()),
        detection_json(&detection, seconds)
    ))
}

fn handle(state: &mut State, line: &str, input: &mut impl Read, out: &mut impl Write) -> Result<(), String> {
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
        Some("original") => {
            let (w, h): (u32, u32) = (num(words.next())?, num(words.next())?);
            state.original = Some((w, h, read_pixels(input, w, h)?));
            out.write_all(b"ok\n").map_err(|e| e.to_string())
        }
        Some("identify") => {
            let (w, h): (u32, u32) = (num(words.next())?, num(words.next())?);
            let key = parse_key(words.next().ok_or("missing key")?)?;
            let px = read_pixels(input, w, h)?;
            writeln!(out, "{}", identify(state, &key, w, h, px)?).map_err(|e| e.to_string())
        }
        Some("register") => {
            let (w, h): (u32, u32) = (num(words.next())?, num(words.next())?);
            let key = parse_key(words.next().ok_or("missing key")?)?;
            let px = read_pixels(input, w, h)?;
            let (tw, th, original) = state.original.as_ref().ok_or("no original")?;
            let mut suspect = Suspect::new(w, h, px).map_err(|e| e.to_string())?;
            let read = read_informed(&key, *tw, *th, original, &mut suspect, &mut || true).map_err(|e| e.to_string())?;
            let found = read.detection.as_ref().and_then(|d| d.found).map_or("null".to_string(), |id| format!("\"{id}\""));
            let json = registration_json(read.registration.as_ref());
            state.registered = read.registration.map(|r| (suspect, r));
            writeln!(out, "{{\"registration\":{json},\"found\":{found}}}").map_err(|e| e.to_string())
        }
        Some("nullread") => {
            let key = parse_key(words.next().ok_or("missing key")?)?;
            let (tw, th, original) = state.original.as_ref().ok_or("no original")?;
            let (suspect, registration) = state.registered.as_ref().ok_or("nothing registered")?;
            let t = Instant::now();
            let d = read_registered(&key, *tw, *th, original, suspect, registration).map_err(|e| e.to_string())?;
            writeln!(out, "{}", detection_json(&d, t.elapsed().as_secs_f64())).map_err(|e| e.to_string())
        }
        _ => Err(format!("unknown command {line:?}")),
    }
}

fn main() {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    let mut state = State::default();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Err(e) = handle(&mut state, line.trim(), &mut input, &mut out) {
            let _ = writeln!(out, "{{\"error\":{e:?}}}");
        }
        let _ = out.flush();
    }
}
