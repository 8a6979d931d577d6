//! Parse and open arbitrary bytes as either kind, unencrypted path (encrypted files are
//! read without a key: structure and signature only), pushed in uneven pieces.
#![no_main]

use iki_format::{Event, Kind, Reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, bytes)) = data.split_first() else { return };
    let kind = if split & 1 == 0 { Kind::Project } else { Kind::Model };
    let step = usize::from(split >> 1).max(1);
    let mut reader = Reader::new(kind);
    let mut pieces = bytes.chunks(step);
    loop {
        match reader.next() {
            Ok(None) => {
                let pushed = match pieces.next() {
                    Some(p) => reader.push(p),
                    None => reader.finish(),
                };
                if pushed.is_err() {
                    return;
                }
            }
            Ok(Some(Event::Locked(_))) => {
                if reader.skip_content().is_err() {
                    return;
                }
            }
            Ok(Some(Event::End(_))) => {
                assert_eq!(reader.next(), Ok(None));
                return;
            }
            Ok(Some(_)) => {}
            Err(e) => {
                assert_eq!(reader.next().unwrap_err(), e, "errors are final");
                return;
            }
        }
    }
});
