//! What identify answers: the license found, how it was read, and when nothing was found, why.

use iki_watermark::{Candidate, Capacity, Registration};

/// Why nothing was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotFoundReason {
    /// The image has too few visible pixels to carry the mark: marked as it is, it would not
    /// read (see [`Capacity`]), and it is smaller than `iki_watermark`'s 64 x 64 minimum.
    TooSmall,
    /// The image is large enough, but marked as it is it would still not read: its own
    /// detail or noise drowns the mark. (Flat colour is not a cause: even pure white carries
    /// the mark, on the half of its pixels the mark moves down.)
    TooBusy,
    /// No texture of the master matches it (after resizing from 25 % to 400 %, turns up to 5
    /// degrees and crops keeping 10 % of a texture, over any background).
    NoMatchingTexture,
    /// A texture matches, but no mark of this master could be read from it.
    NotMarked,
    /// The time budget ran out before every texture was tried.
    TimeBudget,
    /// A mark of this master is there, but several differently licensed copies were mixed
    /// (strong bits beside many near-zero ones); the candidates say whom the scores name.
    Mixed,
}

impl NotFoundReason {
    /// The stable name used in the identify answer.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::TooSmall => "too_small",
            Self::TooBusy => "too_busy",
            Self::NoMatchingTexture => "no_matching_texture",
            Self::NotMarked => "not_marked",
            Self::TimeBudget => "time_budget",
            Self::Mixed => "mixed",
        }
    }
}

/// The texture a registered read used.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureMatch {
    /// Entry path of the texture in the master.
    pub path: String,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// Where the leak sits on it.
    pub registration: Registration,
}

/// The answer of identify.
#[derive(Clone, Debug, PartialEq)]
pub struct Identification {
    /// The license id read.
    pub found: Option<u64>,
    /// The read's overall confidence (the registered read's when one was made).
    pub confidence: f64,
    /// Whether the mark was read through a registration on a texture (false: blind).
    pub registered: bool,
    /// The texture that matched best (or that read the mark).
    pub texture: Option<TextureMatch>,
    /// When nothing was found, why.
    pub reason: Option<NotFoundReason>,
    /// The image's own capacity (computed when nothing was found).
    pub capacity: Option<Capacity>,
    /// Textures the leak was registered against.
    pub textures_tried: u32,
    /// Whether the license was named by its score against the issued licenses (the CRC of
    /// the bits read did not check, docs/watermark.md section 12), not decoded.
    pub soft: bool,
    /// Whether the read looks like several copies mixed.
    pub mixed: bool,
    /// The issued licenses that score highest against the read, best first, each with its
    /// false-accusation probability for this identify (empty when none were given).
    pub candidates: Vec<Candidate>,
}
