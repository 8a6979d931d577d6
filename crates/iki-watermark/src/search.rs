//! The informed search (docs/watermark.md sections 11.2, 11.6, 11.8 and 11.10): registers a
//! leak on one original texture and reads through each registration found, likeliest first,
//! until one reads a mark or, when the caller scores issued licenses, names one.

use crate::check_image;
use crate::detect::Detection;
use crate::error::Error;
use crate::informed::{read_through, Suspect};
use crate::key::WatermarkKey;
use crate::plane::{has_transparency, Channel};
use crate::register::{
    coarse_search, refine_candidate, same_place, Candidate, Pyramid, Reference, Registration,
    CANDIDATES, COARSE_SIDE,
};

/// The most registrations one [`read_informed_until`] reads: the unturned hypothesis and
/// [`CANDIDATES`] more in each of its two searches (the straight texture, then over a
/// background). A read past this count is never made, so a union bound over the reads of a
/// texture may count on it.
pub const MAX_READS: u32 = 2 * (CANDIDATES as u32 + 1);

/// What an informed read found.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct InformedRead {
    /// The best registration of the leak on the texture, if any reached
    /// [`crate::MIN_SIMILARITY`]: the one that read a mark (or that the caller accepted),
    /// or else the most similar.
    pub registration: Option<Registration>,
    /// The read on that registration (`found` says whether a mark was read).
    pub detection: Option<Detection>,
    /// Registrations read (candidates that refined to a plausible, similar registration).
    pub candidates: u32,
    /// Which read `detection` is, counting from 1 in the order they were made (0: none); at
    /// most [`MAX_READS`]. [`read_factor`] of it is that read's share of a union bound.
    pub position: u32,
    /// Whether the caller's `enough` accepted `detection` (its bits did not decode).
    pub accepted: bool,
    /// False when `keep_going` stopped the search before it was done.
    pub complete: bool,
}

/// The union bound's factor for the read at `position` (from 1) of one texture's search: the
/// first read, the likeliest registration, gets half of the texture's false-accusation
/// budget and each of the other `MAX_READS - 1` an equal part of the other half, so the
/// shares of every read that can be made sum to at most 1 (docs/watermark.md section 11.10).
#[must_use]
pub fn read_factor(position: u32) -> f64 {
    if position <= 1 {
        2.0
    } else {
        2.0 * f64::from(MAX_READS - 1)
    }
}

/// Registers `suspect` on the unmarked original `width x height` texture `original`
/// (straight-alpha RGBA8) and reads the watermark through each registration found, best
/// first, until one reads. `keep_going` is asked between steps (the caller's time budget);
/// when it says no the read ends with what it has and `complete: false`.
///
/// # Errors
/// [`Error::ZeroDimension`], [`Error::TooLarge`] or [`Error::BadLength`] when `original`
/// does not match its dimensions.
pub fn read_informed(
    key: &WatermarkKey,
    width: u32,
    height: u32,
    original: &[u8],
    suspect: &mut Suspect,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<InformedRead, Error> {
    read_informed_until(
        key,
        width,
        height,
        original,
        suspect,
        &mut |_, _| false,
        keep_going,
    )
}

/// [`read_informed`], also stopping at the first read whose bits do not decode but that
/// `enough(position, detection)` accepts (the service: a read whose scores name an issued
/// license at the bound [`read_factor`]`(position)` allows). Reads that decode stop the
/// search without asking.
///
/// # Errors
/// As [`read_informed`].
pub fn read_informed_until(
    key: &WatermarkKey,
    width: u32,
    height: u32,
    original: &[u8],
    suspect: &mut Suspect,
    enough: &mut dyn FnMut(u32, &Detection) -> bool,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<InformedRead, Error> {
    check_image(width, height, original.len())?;
    let (w, h) = (width as usize, height as usize);
    let transparent = suspect.transparent;
    suspect.pyramid();
    let suspect: &Suspect = suspect;
    let Some(leak) = suspect.pyramid.as_ref() else {
        return Ok(InformedRead {
            registration: None,
            detection: None,
            candidates: 0,
            position: 0,
            accepted: false,
            complete: true,
        });
    };
    let mut search = Search {
        tried: Vec::new(),
        best: None,
        reads: 0,
        accepted: false,
        complete: true,
    };
    // First the leak as the texture itself (premultiplied when the leak has alpha; a JPEG
    // shows the colour stored under alpha 0). Then, when nothing was read, a leak without
    // alpha of a texture with it may show the texture over some background: the texture's
    // coverage keeps the background out of the match and the read (section 11.6).
    let plain = Reference {
        grey: Pyramid::of_texture(w, h, original, transparent, COARSE_SIDE),
        alpha: None,
    };
    let mut reader = Reader {
        key,
        original: (w, height, original),
        suspect,
        leak,
        enough,
    };
    search.run(&mut reader, &plain, keep_going);
    drop(plain);
    if !search.found() && !transparent && has_transparency(original) && keep_going() {
        let over = Reference {
            grey: Pyramid::of_texture(w, h, original, Channel::OpaqueGrey, COARSE_SIDE),
            alpha: Some(Pyramid::of_texture(
                w,
                h,
                original,
                Channel::Opaque,
                COARSE_SIDE,
            )),
        };
        search.run(&mut reader, &over, keep_going);
    }
    let found = search.found();
    let complete = search.complete && (found || keep_going());
    let accepted = search.accepted;
    let (registration, detection, position) = search
        .best
        .map_or((None, None, 0), |(r, d, p)| (Some(r), Some(d), p));
    Ok(InformedRead {
        registration,
        detection,
        candidates: search.reads,
        position,
        accepted,
        complete,
    })
}

/// What every read of one search needs.
struct Reader<'a> {
    key: &'a WatermarkKey,
    original: (usize, u32, &'a [u8]),
    suspect: &'a Suspect,
    leak: &'a Pyramid,
    enough: &'a mut dyn FnMut(u32, &Detection) -> bool,
}

/// The registrations read so far and the best read, with its position.
struct Search {
    tried: Vec<Registration>,
    best: Option<(Registration, Detection, u32)>,
    reads: u32,
    accepted: bool,
    complete: bool,
}

impl Search {
    fn found(&self) -> bool {
        self.accepted
            || self
                .best
                .as_ref()
                .is_some_and(|(_, d, _)| d.found.is_some())
    }

    /// Registers the leak on `texture` and reads through each registration, best first,
    /// until one reads: first the unturned hypothesis alone (its coarse sweep and its best
    /// candidate, refined at angle 0), then, only when that read nothing, the turned angles
    /// too and the best [`CANDIDATES`] of every angle (docs/watermark.md section 11.8).
    fn run(
        &mut self,
        reader: &mut Reader<'_>,
        texture: &Reference,
        keep_going: &mut dyn FnMut() -> bool,
    ) {
        let Some(mut coarse) = coarse_search(texture, reader.leak) else {
            self.complete &= keep_going();
            return;
        };
        for turned in [false, true] {
            self.complete &= coarse.sweep(reader.leak, turned, keep_going) && keep_going();
            // The unturned hypothesis: its best peak refined at angle 0. Then every angle's
            // best, each refined with its angle free (the unturned one again, as it may be
            // turned by a degree).
            let starts = if turned {
                coarse.candidates(CANDIDATES)
            } else {
                coarse
                    .candidates(1)
                    .into_iter()
                    .map(Candidate::keeping_angle)
                    .collect()
            };
            for start in starts {
                if !keep_going() {
                    self.complete = false;
                    return;
                }
                if self.read_candidate(reader, texture, start, keep_going) {
                    return;
                }
            }
            if !self.complete {
                return;
            }
        }
    }

    /// Refines one candidate and, when it is plausible and new, reads through it; true when
    /// the read found a mark or the caller accepted it.
    fn read_candidate(
        &mut self,
        reader: &mut Reader<'_>,
        texture: &Reference,
        start: Candidate,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> bool {
        if self.reads >= MAX_READS {
            return false;
        }
        let Some(registration) = refine_candidate(texture, reader.leak, start, keep_going) else {
            return false;
        };
        if self.tried.iter().any(|t| same_place(t, &registration)) || !keep_going() {
            return false;
        }
        self.tried.push(registration);
        self.reads += 1;
        let (w, height, original) = reader.original;
        let detection = read_through(
            reader.key,
            w,
            height,
            original,
            reader.suspect,
            &registration,
        );
        let decoded = detection.found.is_some();
        let accepted = !decoded && (reader.enough)(self.reads, &detection);
        let better = self
            .best
            .as_ref()
            .is_none_or(|(b, _, _)| registration.similarity > b.similarity);
        if decoded || accepted || better {
            self.best = Some((registration, detection, self.reads));
        }
        self.accepted = accepted;
        decoded || accepted
    }
}
