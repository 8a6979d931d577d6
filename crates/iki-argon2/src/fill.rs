//! Memory filling (RFC 9106 §3.2 steps 3-7, §3.4): the first two blocks of each lane from
//! H', then every pass slice by slice, each slice lane by lane, and the final xor of the
//! last column.
//!
//! Argon2id addresses the first half of the first pass data-independently (Argon2i, §3.4.1.2:
//! J1 and J2 from the address blocks G(0, G(0, Z))) and everything after that
//! data-dependently (Argon2d, §3.4.1.1: J1 and J2 from the previous block's first word).
//! The mapping from (J1, J2) to a reference block is §3.4.2, written like the reference
//! implementation's `index_alpha`.
//!
//! Zeroization: the H' buffer of the first blocks is `Zeroizing`; the compression scratch
//! and the address blocks (derived from public parameters only, but wiped anyway) are wiped
//! when [`Work`] drops; the last-column xor is returned in `Zeroizing`.

use zeroize::{Zeroize, Zeroizing};

use crate::block::{Block, BYTES};
use crate::compress::{compress, Scratch};
use crate::h::{h_prime, TYPE_ID};
use crate::{Error, Params, SYNC_POINTS};

/// J1/J2 pairs per address block.
const ADDRESSES_PER_BLOCK: usize = 128;

/// The lane geometry: `p` lanes of `lane_len` blocks, four segments each.
#[derive(Clone, Copy)]
struct Shape {
    lanes: usize,
    lane_len: usize,
    segment_len: usize,
}

/// Where a segment is: pass `r`, lane `l`, slice `sl` (RFC 9106 §3.4.1.2's Z).
#[derive(Clone, Copy)]
struct Position {
    pass: u32,
    lane: usize,
    slice: u32,
}

/// Buffers reused across segments, wiped on drop.
#[derive(Default)]
struct Work {
    scratch: Scratch,
    zero: Block,
    input: Block,
    middle: Block,
    addresses: Block,
}

impl Drop for Work {
    fn drop(&mut self) {
        self.input.zeroize();
        self.middle.zeroize();
        self.addresses.zeroize();
    }
}

impl Work {
    /// The next address block: Z's counter (word 6) plus one, then G(0, G(0, Z)).
    fn next_addresses(&mut self) {
        if let Some(counter) = self.input.0.get_mut(6) {
            *counter = counter.wrapping_add(1);
        }
        compress(
            &self.zero,
            &self.input,
            &mut self.middle,
            false,
            &mut self.scratch,
        );
        compress(
            &self.zero,
            &self.middle,
            &mut self.addresses,
            false,
            &mut self.scratch,
        );
    }
}

/// Fills `memory` (exactly `block_count` blocks) for `params` from `h0`.
pub(crate) fn fill(params: &Params, h0: &[u8; 64], memory: &mut [Block]) -> Result<(), Error> {
    let lanes = usize::try_from(params.p).map_err(|_| Error::Params)?;
    let lane_len = memory.len() / lanes;
    let shape = Shape {
        lanes,
        lane_len,
        segment_len: lane_len / SYNC_POINTS as usize,
    };
    let mut bytes = Zeroizing::new([0u8; BYTES]);
    for (lane, blocks) in memory.chunks_exact_mut(lane_len).enumerate() {
        let lane_le = u32::try_from(lane)
            .map_err(|_| Error::Params)?
            .to_le_bytes();
        for (j, block) in blocks.iter_mut().take(2).enumerate() {
            let j_le = u32::try_from(j).map_err(|_| Error::Params)?.to_le_bytes();
            h_prime(&[&h0[..], &j_le, &lane_le], &mut bytes[..])?;
            block.load_bytes(&bytes);
        }
    }
    let mut work = Work::default();
    let m_blocks = u64::try_from(memory.len()).map_err(|_| Error::Memory)?;
    for pass in 0..params.t {
        for slice in 0..SYNC_POINTS {
            for lane in 0..lanes {
                let pos = Position { pass, lane, slice };
                if pass == 0 && slice < SYNC_POINTS / 2 {
                    work.input.zeroize();
                    let z = [
                        u64::from(pass),
                        lane as u64,
                        u64::from(slice),
                        m_blocks,
                        u64::from(params.t),
                        u64::from(TYPE_ID),
                    ];
                    for (word, value) in work.input.0.iter_mut().zip(z) {
                        *word = value;
                    }
                }
                fill_segment(pos, shape, memory, &mut work)?;
            }
        }
    }
    Ok(())
}

/// Fills one segment (RFC 9106 §3.4).
fn fill_segment(
    pos: Position,
    shape: Shape,
    memory: &mut [Block],
    work: &mut Work,
) -> Result<(), Error> {
    let data_independent = pos.pass == 0 && pos.slice < SYNC_POINTS / 2;
    let first_slice = pos.pass == 0 && pos.slice == 0;
    let start = if first_slice { 2 } else { 0 };
    if data_independent && first_slice {
        work.next_addresses();
    }
    let lane_start = pos.lane * shape.lane_len;
    let segment_start = lane_start + pos.slice as usize * shape.segment_len;
    for i in start..shape.segment_len {
        let cur = segment_start + i;
        let prev = if cur == lane_start {
            lane_start + shape.lane_len - 1
        } else {
            cur - 1
        };
        let pseudo_rand = if data_independent {
            if i % ADDRESSES_PER_BLOCK == 0 {
                work.next_addresses();
            }
            work.addresses.0.get(i % ADDRESSES_PER_BLOCK)
        } else {
            memory.get(prev).and_then(|b| b.0.first())
        }
        .copied()
        .ok_or(Error::Memory)?;
        let ref_lane = if first_slice {
            pos.lane
        } else {
            ((pseudo_rand >> 32) % shape.lanes as u64) as usize
        };
        let index = ref_index(
            pos,
            shape,
            i,
            ref_lane == pos.lane,
            pseudo_rand & 0xFFFF_FFFF,
        );
        let refb = ref_lane * shape.lane_len + index;
        let (out, prev_block, ref_block) = three(memory, cur, prev, refb).ok_or(Error::Memory)?;
        compress(prev_block, ref_block, out, pos.pass > 0, &mut work.scratch);
    }
    Ok(())
}

/// The reference block's index in its lane (RFC 9106 §3.4.2): J1 maps non-uniformly into
/// the blocks computed so far that this block may reference.
fn ref_index(pos: Position, shape: Shape, i: usize, same_lane: bool, j1: u64) -> usize {
    let seg = shape.segment_len as u64;
    let i = i as u64;
    let finished = if pos.pass == 0 {
        u64::from(pos.slice) * seg
    } else {
        (shape.lane_len as u64).saturating_sub(seg)
    };
    // The block just before the current one is excluded from another lane's reference set
    // when the current one opens its segment (it may not be finished in that lane).
    let area = if same_lane {
        (finished + i).saturating_sub(1)
    } else {
        finished.saturating_sub(u64::from(i == 0))
    };
    let x = (j1 * j1) >> 32;
    let relative = area.saturating_sub(1).saturating_sub((area * x) >> 32);
    let start = if pos.pass == 0 || pos.slice == SYNC_POINTS - 1 {
        0
    } else {
        (u64::from(pos.slice) + 1) * seg
    };
    ((start + relative) % (shape.lane_len as u64)) as usize
}

/// `memory[cur]` mutably beside `memory[a]` and `memory[b]`, which must differ from `cur`.
fn three(
    memory: &mut [Block],
    cur: usize,
    a: usize,
    b: usize,
) -> Option<(&mut Block, &Block, &Block)> {
    let (left, right) = memory.split_at_mut(cur);
    let (out, right) = right.split_first_mut()?;
    let pick = |k: usize| {
        if k < cur {
            left.get(k)
        } else {
            right.get(k.checked_sub(cur + 1)?)
        }
    };
    Some((out, pick(a)?, pick(b)?))
}

/// The xor of every lane's last block (RFC 9106 §3.2 step 7, C).
pub(crate) fn xor_last_column(
    params: &Params,
    memory: &[Block],
) -> Result<Zeroizing<Block>, Error> {
    let lanes = usize::try_from(params.p).map_err(|_| Error::Params)?;
    let lane_len = memory.len() / lanes;
    let mut c = Zeroizing::new(Block::default());
    for lane in memory.chunks_exact(lane_len) {
        c.xor_assign(lane.last().ok_or(Error::Memory)?);
    }
    Ok(c)
}
