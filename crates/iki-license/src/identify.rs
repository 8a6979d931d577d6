//! Identify (SPEC behaviour rule 6; docs/watermark.md section 11): which license a leaked
//! texture of a master carries, even when it was resized or cropped.
//!
//! An [`Identifier`] first reads the leak blind. When that finds nothing, the caller streams
//! the stored master through [`Identifier::push`]: each `rgba8` texture whose size could
//! hold the leak is collected (one texture at a time, so memory stays around the largest
//! texture plus the leak) and, once complete, the leak is registered on it and read through
//! the registration (`iki_watermark::read_informed`). The first texture that reads a mark
//! ends the search ([`Identifier::done`]); so does `keep_going` saying no (the caller's time
//! budget). [`Identifier::finish`] says what was found, which texture matched and with which
//! transform, and, when nothing was found, why, from the detector's own measures.

use iki_format::{Encoding, Event, Manifest};
use iki_watermark::{
    capacity, could_register, match_licenses, read_factor, read_informed_until, Candidate,
    Detection, SoftMatch, Suspect, WatermarkKey,
};

use crate::error::Error;
use crate::master::MasterStream;
use crate::service::ServiceKeys;
use crate::types::MasterRef;

mod answer;

pub use answer::{Identification, NotFoundReason, TextureMatch};

/// Visible pixels below which an image counts as too small (64 x 64).
pub const MIN_VISIBLE_PIXELS: u64 = 64 * 64;

/// The texture being collected from the master.
struct Collecting {
    entry: u32,
    path: String,
    width: u32,
    height: u32,
    next_chunk: u32,
    rgba: Vec<u8>,
}

/// One identify request. See the module documentation.
pub struct Identifier {
    key: WatermarkKey,
    suspect: Suspect,
    blind: Detection,
    stream: MasterStream,
    /// Path, width and height of each entry that is a texture worth trying.
    textures: Vec<Option<(String, u32, u32)>>,
    collecting: Option<Collecting>,
    best: Option<(TextureMatch, Detection)>,
    tried: u32,
    out_of_time: bool,
    /// The licenses issued for the master (see [`Identifier::set_issued`]).
    issued: Vec<u64>,
    /// The strongest soft match so far, with the texture it was read on (None: blind) and
    /// that read's overall confidence.
    soft: Option<(SoftMatch, Option<TextureMatch>, f64)>,
}

impl ServiceKeys {
    /// Starts identifying a leaked `width x height` RGBA8 image (see [`crate::decode_image`])
    /// of `master`; the blind read happens here.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` when the buffer does not match the dimensions or the master id is
    /// bad.
    pub fn identifier(
        &self,
        master: &MasterRef,
        width: u32,
        height: u32,
        rgba: Vec<u8>,
    ) -> Result<Identifier, Error> {
        master.check()?;
        let key = self.watermark_key(master);
        let suspect = Suspect::new(width, height, rgba)?;
        let blind = suspect.detect(&key);
        Ok(Identifier {
            key,
            suspect,
            blind,
            stream: MasterStream::for_recorded_master(self),
            textures: Vec::new(),
            collecting: None,
            best: None,
            tried: 0,
            out_of_time: false,
            issued: Vec::new(),
            soft: None,
        })
    }
}

impl Identifier {
    /// True once nothing more is needed: the mark was read (blind or registered), or the
    /// time budget ran out. Stop pushing the master then.
    #[must_use]
    pub fn done(&self) -> bool {
        self.blind.found.is_some()
            || self.registered_found()
            || self.out_of_time
            || self.soft_named()
    }

    /// Gives the ids of the licenses issued for the master, so that a read whose bits do not
    /// decode can still name one by its score (docs/watermark.md section 12), and scores the
    /// blind read against them. Call before the first [`Identifier::push`]; at most
    /// `iki_watermark::MAX_ISSUED` are scored.
    pub fn set_issued(&mut self, issued: Vec<u64>) {
        self.issued = issued;
        // Half of the false-accusation budget goes to the blind read, half to the textures.
        let blind = match_licenses(
            &self.blind.bit_confidence,
            self.blind.confidence,
            &self.issued,
            2.0,
        );
        self.soft = Some((blind, None, self.blind.confidence));
    }

    /// Reads the next bytes of the stored master, registering the leak on each texture as it
    /// completes. `keep_going` is the time budget: asked between steps.
    ///
    /// # Errors
    /// The master's container errors (it is read as in a license copy).
    pub fn push(
        &mut self,
        bytes: &[u8],
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<(), Error> {
        if self.done() {
            return Ok(());
        }
        self.stream.push(bytes)?;
        while let Some(event) = self.stream.next()? {
            match event {
                Event::Manifest(manifest) => self.plan(&manifest),
                Event::Chunk {
                    entry,
                    index,
                    last,
                    data,
                } => {
                    self.collect(entry, index, &data)?;
                    self.stream.recycle(data);
                    if last {
                        self.search(entry, keep_going);
                    }
                }
                _ => {}
            }
            if self.done() {
                break;
            }
        }
        Ok(())
    }

    /// The answer.
    #[must_use]
    pub fn finish(mut self) -> Identification {
        let soft = self.soft.take();
        let candidates_of =
            |registered: bool, best: &Option<(TextureMatch, Detection)>| -> Vec<Candidate> {
                // The candidates of the read that decoded, when it was scored.
                let matched = best.as_ref().map(|(t, _)| t);
                soft.as_ref()
                    .filter(|(_, texture, _)| texture.as_ref() == matched.filter(|_| registered))
                    .map(|(m, _, _)| m.candidates.clone())
                    .unwrap_or_default()
            };
        if self.blind.found.is_some() {
            let candidates = candidates_of(false, &None);
            return Identification {
                found: self.blind.found,
                confidence: self.blind.confidence,
                registered: false,
                texture: None,
                reason: None,
                capacity: None,
                textures_tried: 0,
                soft: false,
                mixed: false,
                candidates,
            };
        }
        if let Some((texture, detection)) = self.best.take_if(|(_, d)| d.found.is_some()) {
            let best = Some((texture, detection));
            let candidates = candidates_of(true, &best);
            let (texture, detection) = best.unzip();
            return Identification {
                found: detection.as_ref().and_then(|d| d.found),
                confidence: detection.map_or(0.0, |d| d.confidence),
                registered: true,
                texture,
                reason: None,
                capacity: None,
                textures_tried: self.tried,
                soft: false,
                mixed: false,
                candidates,
            };
        }
        // Nothing decoded: the strongest soft evidence speaks, if it names anyone.
        if let Some((matched, texture, confidence)) =
            soft.as_ref().filter(|(m, _, _)| m.named().next().is_some())
        {
            let found = (!matched.mixed).then(|| matched.named().next()).flatten();
            return Identification {
                found,
                confidence: *confidence,
                registered: texture.is_some(),
                texture: texture.clone(),
                reason: matched.mixed.then_some(NotFoundReason::Mixed),
                capacity: None,
                textures_tried: self.tried,
                soft: found.is_some(),
                mixed: matched.mixed,
                candidates: matched.candidates.clone(),
            };
        }
        let mixed = soft.as_ref().is_some_and(|(m, _, _)| m.mixed)
            || self
                .best
                .as_ref()
                .is_some_and(|(_, d)| iki_watermark::looks_mixed(&d.bit_confidence, d.confidence))
            || iki_watermark::looks_mixed(&self.blind.bit_confidence, self.blind.confidence);
        let candidates = soft.map(|(m, _, _)| m.candidates).unwrap_or_default();
        let capacity = (!mixed).then(|| capacity(&self.key, &self.suspect));
        // A matched texture is the most precise fact: the read there compares against the
        // original, so the image's own detail no longer matters.
        let reason = match capacity {
            _ if mixed => NotFoundReason::Mixed,
            _ if self.out_of_time => NotFoundReason::TimeBudget,
            _ if self.best.is_some() => NotFoundReason::NotMarked,
            Some(c) if !c.reads && c.visible_pixels < MIN_VISIBLE_PIXELS => {
                NotFoundReason::TooSmall
            }
            Some(c) if !c.reads => NotFoundReason::TooBusy,
            _ => NotFoundReason::NoMatchingTexture,
        };
        let (texture, confidence) = match self.best {
            Some((texture, detection)) => (Some(texture), detection.confidence),
            None => (None, self.blind.confidence),
        };
        Identification {
            found: None,
            confidence,
            registered: texture.is_some(),
            texture,
            reason: Some(reason),
            capacity,
            textures_tried: self.tried,
            soft: false,
            mixed,
            candidates,
        }
    }

    fn soft_named(&self) -> bool {
        self.soft
            .as_ref()
            .is_some_and(|(m, _, _)| m.named().next().is_some())
    }

    fn registered_found(&self) -> bool {
        self.best.as_ref().is_some_and(|(_, d)| d.found.is_some())
    }

    /// Notes which entries are textures that could hold the leak.
    fn plan(&mut self, manifest: &Manifest) {
        let (lw, lh) = (self.suspect.width(), self.suspect.height());
        self.textures = manifest
            .entries
            .iter()
            .map(|e| {
                let meta = e.meta.as_ref()?;
                let (w, h) = (meta.width?, meta.height?);
                (e.encoding == Encoding::Rgba8 && could_register(w, h, lw, lh))
                    .then(|| (e.path.clone(), w, h))
            })
            .collect();
    }

    /// Appends a chunk of a texture worth trying.
    fn collect(&mut self, entry: u32, index: u32, data: &[u8]) -> Result<(), Error> {
        let Some(Some((path, width, height))) = self.textures.get(entry as usize) else {
            return Ok(());
        };
        if self.collecting.as_ref().is_none_or(|c| c.entry != entry) {
            let bytes = u64::from(*width) * u64::from(*height) * 4;
            let bytes =
                usize::try_from(bytes).map_err(|_| Error::state("texture too large to hold"))?;
            self.collecting = Some(Collecting {
                entry,
                path: path.clone(),
                width: *width,
                height: *height,
                next_chunk: 0,
                rgba: Vec::with_capacity(bytes),
            });
        }
        let texture = self
            .collecting
            .as_mut()
            .ok_or(Error::state("no texture being collected"))?;
        if index != texture.next_chunk || texture.rgba.len() + data.len() > texture.rgba.capacity()
        {
            return Err(Error::state(
                "texture chunks out of order or past the texture's size",
            ));
        }
        texture.next_chunk += 1;
        texture.rgba.extend_from_slice(data);
        Ok(())
    }

    /// Registers the leak on the texture just completed and reads through it.
    fn search(&mut self, entry: u32, keep_going: &mut dyn FnMut() -> bool) {
        let Some(texture) = self.collecting.take_if(|c| c.entry == entry) else {
            return;
        };
        if !keep_going() {
            self.out_of_time = true;
            return;
        }
        self.tried += 1;
        // The other half of the false-accusation budget, shared by the textures planned and,
        // within a texture, by its reads (`read_factor`): the search stops at the first read
        // whose scores name a license at its share (docs/watermark.md section 11.10).
        let textures = 2.0 * self.textures.iter().flatten().count().max(1) as f64;
        let issued = &self.issued;
        let mut named: Option<(u32, SoftMatch)> = None;
        let mut enough = |position: u32, d: &Detection| {
            if issued.is_empty() {
                return false;
            }
            let matched = match_licenses(
                &d.bit_confidence,
                d.confidence,
                issued,
                textures * read_factor(position),
            );
            let names = matched.named().next().is_some();
            named = names.then_some((position, matched));
            names
        };
        let read = read_informed_until(
            &self.key,
            texture.width,
            texture.height,
            &texture.rgba,
            &mut self.suspect,
            &mut enough,
            keep_going,
        );
        let Ok(read) = read else { return };
        if !read.complete
            && read.detection.as_ref().is_none_or(|d| d.found.is_none())
            && !read.accepted
        {
            self.out_of_time = true;
        }
        let (Some(registration), Some(detection)) = (read.registration, read.detection) else {
            return;
        };
        if !self.issued.is_empty() {
            let matched = match named.take() {
                Some((position, matched)) if read.accepted && position == read.position => matched,
                _ => match_licenses(
                    &detection.bit_confidence,
                    detection.confidence,
                    &self.issued,
                    textures * read_factor(read.position),
                ),
            };
            if self
                .soft
                .as_ref()
                .is_none_or(|(m, _, _)| matched.strongest() < m.strongest())
            {
                let texture = TextureMatch {
                    path: texture.path.clone(),
                    width: texture.width,
                    height: texture.height,
                    registration,
                };
                self.soft = Some((matched, Some(texture), detection.confidence));
            }
        }
        let better = match &self.best {
            None => true,
            Some((m, d)) => {
                detection.found.is_some() && d.found.is_none()
                    || registration.similarity > m.registration.similarity && d.found.is_none()
            }
        };
        if better {
            let matched = TextureMatch {
                path: texture.path,
                width: texture.width,
                height: texture.height,
                registration,
            };
            self.best = Some((matched, detection));
        }
    }
}

impl core::fmt::Debug for Identifier {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Identifier")
            .field("suspect", &self.suspect)
            .field("tried", &self.tried)
            .finish_non_exhaustive()
    }
}
