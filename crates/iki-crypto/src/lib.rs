//! iki-crypto (under construction).
#![forbid(unsafe_code)]
