//! `ts/src/codes.ts` and `ts/src/limits.ts` must be exactly what `make gen` writes today, and
//! `codes.ts` must list iki-license's own codes (so `IkiError.code` can carry them).

#[path = "../examples/gen_ts.rs"]
mod gen_ts;

const TS_SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ts/src");

fn check(file: &str, expected: &str) {
    let path = format!("{TS_SRC}/{file}");
    let found = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path} is missing ({e}): run `make gen`"));
    assert!(found == expected, "{path} is stale: run `make gen`");
}

#[test]
fn codes_ts_is_fresh_and_lists_the_license_codes() {
    let text = gen_ts::codes_ts();
    for code in iki_format::error::ALL_CODES
        .iter()
        .chain(iki_license::OWN_CODES)
    {
        assert!(text.contains(&format!("  '{code}',\n")), "{code}");
    }
    assert!(text.ends_with(
        "  'INTERNAL',\n] as const;\nexport type IkiErrorCode = (typeof ERROR_CODES)[number];\n"
    ));
    check("codes.ts", &text);
}

#[test]
fn limits_ts_is_fresh() {
    check("limits.ts", &gen_ts::limits_ts());
}
