//! `ts/src/limits.ts` must begin with exactly what this crate's generator writes today (iki-license
//! appends the copy's DEFLATE level and checks the whole file). `ts/src/codes.ts` holds
//! iki-license's codes too and is checked by `crates/iki-license/tests/generated_ts.rs`.

#[path = "../examples/gen_ts.rs"]
mod gen_ts;

const TS_SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ts/src");

fn check_prefix(file: &str, expected: &str) {
    let path = format!("{TS_SRC}/{file}");
    let found = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path} is missing ({e}): run `make gen`"));
    assert!(
        found.starts_with(expected),
        "{path} is stale: run `make gen`"
    );
}

#[test]
fn limits_ts_is_fresh() {
    let text = gen_ts::limits_ts();
    assert!(text.contains("export const MAX_HEAD_PAYLOAD_BYTES = 4096 as const;"));
    assert!(text.contains("export const MAX_ENTRY_SIZE_BYTES = 9007199254740991 as const;"));
    check_prefix("limits.ts", &text);
}

#[test]
fn codes_ts_lists_every_format_code_in_order() {
    let text = gen_ts::codes_ts_with("x", &[("y", &["Z_CODE"])]);
    let listed: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix('\'')?.strip_suffix("',"))
        .collect();
    let mut expected: Vec<&str> = iki_format::error::ALL_CODES.to_vec();
    expected.extend(["Z_CODE", "INTERNAL"]);
    assert_eq!(listed, expected);
}
