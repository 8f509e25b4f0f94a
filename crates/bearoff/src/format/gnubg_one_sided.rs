//! gnubg's one-sided `.bd` files, plain and compressed: written from a table or level by level
//! as a sweep finishes them, and read.

use super::*;

/// Writes `t` as gnubg's one-sided database (makebearoff's layout; see the module docs), the
/// compressed or plain layout, with or without gammon distributions. Entries past 31 rolls are
/// dropped. Refuses gammon distributions the table lacks and files gnubg cannot address.
pub fn write_gnubg_one_sided(
    t: &OneSided,
    compressed: bool,
    gammon: bool,
    out: &mut (impl Write + Seek),
) -> Result<()> {
    check_one_sided(t)?;
    let g = match (gammon, &t.gammon) {
        (false, _) => None,
        (true, Some((_, glen, gdist))) => Some((*glen, gdist.as_slice())),
        (true, None) => {
            return Err(FormatError::GnubgExport(
                "gammon distributions requested, but the table has none (rollsim builds them for 15-checker tables only)".into(),
            ));
        }
    };
    let dist = |i: usize, gammon: bool| match (gammon, g) {
        (false, _) => quantized(&t.dist[t.len * i..t.len * (i + 1)]),
        (true, Some((gl, gd))) => quantized(&gd[gl * i..gl * (i + 1)]),
        (true, None) => unreachable!(),
    };
    encode_gnubg_one_sided(t.space, compressed, g.is_some(), dist, out)
}

/// makebearoff's `generate_os` output for the distributions `dist(i, gammon)`, in position
/// order.
pub(super) fn encode_gnubg_one_sided(
    space: Space,
    compressed: bool,
    gammon: bool,
    dist: impl Fn(usize, bool) -> [u16; 32],
    out: &mut (impl Write + Seek),
) -> Result<()> {
    let mut w = GnubgOneSidedWriter::new(space, compressed, gammon, None, out)?;
    for i in 0..space.len() {
        let g = gammon.then(|| dist(i, true));
        w.push(i as u32, &dist(i, false), g.as_ref())?;
    }
    w.finish()
}

/// gnubg's one-sided layout, written one position at a time in any order: the compressed
/// layout's runs follow in the order the positions come (its index says where each is; gnubg
/// reads through the index), the plain layout's records go to their place. Pushed in position
/// order, the file is makebearoff's. The compressed layout keeps its index (8 bytes a
/// position) until `finish`, in memory or, given a spill directory and an index over
/// 8 MiB, in a temporary file there (26 MB for 15x10, a tenth of the build's
/// peak); the plain one keeps its records.
pub struct GnubgOneSidedWriter<'a, W: Write + Seek> {
    out: io::BufWriter<&'a mut W>,
    n: usize,
    compressed: bool,
    gammon: bool,
    /// Bytes a position takes in `table`: its index entry, or its record.
    entry: usize,
    /// Compressed: the index (unless spilled); plain: the records.
    table: Vec<u8>,
    /// The index entries as they come, each after its position's index.
    spill: Option<io::BufWriter<std::fs::File>>,
    /// In `uint16` units from the end of the index.
    offset: u64,
    pushed: usize,
    buf: Vec<u8>,
}

/// A compressed index up to this size stays in memory while the records stream out: spilled,
/// it is written to a temporary file and read back, 12 bytes a position, which costs the 15x8
/// build (3.9 MB of index) a twelfth of its time. Larger ones, 26 MB for 15x10, spill, which
/// keeps that build's peak memory within 1.5 times makebearoff's.
const INDEX_IN_MEMORY_MAX: usize = 8 << 20;

/// Whether a compressed table's writer, given somewhere to spill, spills its index.
pub fn spills_index(space: Space, compressed: bool, gammon: bool) -> bool {
    compressed && space.len() * (4 + 2 * (1 + usize::from(gammon))) > INDEX_IN_MEMORY_MAX
}

impl<'a, W: Write + Seek> GnubgOneSidedWriter<'a, W> {
    pub fn new(
        space: Space,
        compressed: bool,
        gammon: bool,
        spill_dir: Option<&Path>,
        out: &'a mut W,
    ) -> Result<GnubgOneSidedWriter<'a, W>> {
        let space = valid_space(space)?;
        let n = space.len();
        let halves = 1 + usize::from(gammon);
        let entry = if compressed {
            4 + 2 * halves
        } else {
            64 * halves
        };
        // The compressed layout's size is known at the end; its index alone must fit now.
        gnubg_size_limit((GNUBG_HEADER + n * entry) as u64)?;
        let header = format!(
            "gnubg-OS-{:02}-{:02}-{}-{}-0xxxxxxxxxxxxxxxxxxx\n",
            space.points,
            space.checkers,
            u8::from(gammon),
            u8::from(compressed)
        );
        debug_assert_eq!(header.len(), GNUBG_HEADER);
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        out.write_all(header.as_bytes())?;
        if compressed {
            out.seek(SeekFrom::Start((GNUBG_HEADER + n * entry) as u64))?;
        }
        let spill = match spill_dir.filter(|_| spills_index(space, compressed, gammon)) {
            Some(dir) => Some(io::BufWriter::new(tempfile::tempfile_in(dir)?)),
            None => None,
        };
        Ok(GnubgOneSidedWriter {
            out,
            n,
            compressed,
            gammon,
            entry,
            table: if spill.is_some() {
                Vec::new()
            } else {
                vec![0; n * entry]
            },
            spill,
            offset: 0,
            pushed: 0,
            buf: Vec::with_capacity(128),
        })
    }

    /// Position `i`'s distributions, bearing off and (in a file with them) the first checker
    /// off.
    pub fn push(&mut self, i: u32, off: &[u16; 32], first_off: Option<&[u16; 32]>) -> Result<()> {
        let i = i as usize;
        let halves: &[&[u16; 32]] = match (self.gammon, first_off) {
            (false, _) => &[off],
            (true, Some(g)) => &[off, g],
            (true, None) => {
                return Err(FormatError::GnubgExport(format!(
                    "position {i} has no gammon distribution"
                )));
            }
        };
        self.pushed += 1;
        let entry = self.entry;
        if !self.compressed {
            let rec = &mut self.table[i * entry..][..entry];
            for (d, h) in rec.chunks_exact_mut(64).zip(halves) {
                for (b, v) in d.chunks_exact_mut(2).zip(h.iter()) {
                    b.copy_from_slice(&v.to_le_bytes());
                }
            }
            return Ok(());
        }
        // gnubg's sanity check in GetDistCompressed: `iOffset > 64 * nPos && 64 * nPos > 0`,
        // computed in 32-bit unsigned arithmetic.
        let limit = (64 * self.n as u64) as u32;
        if self.offset > u64::from(limit) && limit > 0 {
            return Err(FormatError::GnubgExport(format!(
                "offset {} of position {i} trips gnubg's 32-bit sanity check (64 x {} positions wraps to {limit})",
                self.offset, self.n
            )));
        }
        let mut e = [0u8; 8];
        e[..4].copy_from_slice(&(self.offset as u32).to_le_bytes());
        self.buf.clear();
        for (k, q) in halves.iter().enumerate() {
            let (ioff, nz) = run(q);
            e[4 + 2 * k] = nz as u8;
            e[5 + 2 * k] = ioff as u8;
            le16s(&mut self.buf, &q[ioff..ioff + nz]);
            self.offset += nz as u64;
        }
        match &mut self.spill {
            Some(f) => {
                f.write_all(&(i as u32).to_le_bytes())?;
                f.write_all(&e[..entry])?;
            }
            None => self.table[i * entry..][..entry].copy_from_slice(&e[..entry]),
        }
        Ok(self.out.write_all(&self.buf)?)
    }

    /// Writes what is kept (the index, or the records) once every position is in.
    pub fn finish(mut self) -> Result<()> {
        if self.pushed != self.n {
            return Err(FormatError::Table(format!(
                "{} of {} positions written",
                self.pushed, self.n
            )));
        }
        if let Some(spill) = self.spill.take() {
            let entry = self.entry;
            self.table = vec![0; self.n * entry];
            let mut f = spill.into_inner().map_err(io::IntoInnerError::into_error)?;
            f.seek(SeekFrom::Start(0))?;
            let mut r = io::BufReader::new(f);
            let mut rec = [0u8; 12];
            for _ in 0..self.n {
                r.read_exact(&mut rec[..4 + entry])?;
                let i = u32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]) as usize;
                self.table[i * entry..][..entry].copy_from_slice(&rec[4..4 + entry]);
            }
        }
        if self.compressed {
            gnubg_size_limit((GNUBG_HEADER + self.table.len()) as u64 + 2 * self.offset)?;
            self.out.seek(SeekFrom::Start(GNUBG_HEADER as u64))?;
        }
        self.out.write_all(&self.table)?;
        Ok(self.out.flush()?)
    }
}

/// gnubg's 32 entries of a distribution given from `first` rolls: quantized, truncated or
/// zero-padded.
pub fn gnubg_entries<P: crate::numeric::Prob>(
    first: usize,
    probs: impl IntoIterator<Item = P>,
) -> [u16; 32] {
    let mut q = [0u16; 32];
    for (q, p) in q.iter_mut().skip(first).zip(probs) {
        *q = p.quantized();
    }
    q
}

/// Reads a gnubg one-sided database, compressed or not (normal-distribution files are
/// refused). The file must be exactly as long as its header and index imply.
pub fn read_gnubg_one_sided(bytes: &[u8]) -> Result<GnubgOneSided> {
    let h = GnubgHeader::new(bytes)?;
    h.expect_kind(b"OS")?;
    let space = h.space()?;
    let gammon = h.flag(15, "gammon")?;
    let compressed = h.flag(17, "compressed")?;
    if h.flag(19, "normal-distribution")? {
        return Err(FormatError::GnubgUnsupported(
            "normal-distribution approximation (no exact distributions)".into(),
        ));
    }
    let n = space.len();
    let halves = if gammon { 2 } else { 1 };
    // Sizes are checked before anything is allocated for the `n` a header claims.
    let dists = if compressed {
        let entry = 4 + 2 * halves;
        let data = GNUBG_HEADER + n * entry;
        if bytes.len() < data {
            return Err(FormatError::Truncated {
                expected: data as u64,
                found: bytes.len() as u64,
            });
        }
        // Position i's runs: its byte offset from `data` and `(ioff, nz)` per distribution.
        let runs = |i: usize| {
            let e = &bytes[GNUBG_HEADER + i * entry..GNUBG_HEADER + (i + 1) * entry];
            let r = [
                (e[5], e[4]),
                (
                    e.get(7).copied().unwrap_or(0),
                    e.get(6).copied().unwrap_or(0),
                ),
            ]
            .map(|(ioff, nz)| (usize::from(ioff), usize::from(nz)));
            match r.iter().find(|&&(ioff, nz)| ioff + nz > GNUBG_ENTRIES) {
                Some((ioff, nz)) => Err(FormatError::GnubgData(format!(
                    "index entry {i} has a run of {nz} entries from entry {ioff}, past entry 31"
                ))),
                None => Ok((2 * u32_at(e, 0) as usize, r)),
            }
        };
        let mut end = data;
        for i in 0..n {
            let (offset, r) = runs(i)?;
            end = end.max(data + offset + 2 * (r[0].1 + r[1].1));
        }
        exact_size(end as u128, bytes.len())?;
        let mut dists = vec![[0u16; 32]; n * halves];
        for i in 0..n {
            let (offset, r) = runs(i)?;
            let mut at = data + offset;
            for (k, &(ioff, nz)) in r[..halves].iter().enumerate() {
                for v in &mut dists[halves * i + k][ioff..ioff + nz] {
                    *v = u16_at(bytes, at);
                    at += 2;
                }
            }
        }
        dists
    } else {
        exact_size((GNUBG_HEADER + n * 64 * halves) as u128, bytes.len())?;
        bytes[GNUBG_HEADER..]
            .chunks_exact(64)
            .map(|c| std::array::from_fn(|k| u16_at(c, 2 * k)))
            .collect()
    };
    let (dist, gammon_dist) = if gammon {
        let (d, g): (Vec<_>, Vec<_>) = dists.chunks_exact(2).map(|p| (p[0], p[1])).unzip();
        (d, Some(g))
    } else {
        (dists, None)
    };
    Ok(GnubgOneSided {
        points: space.points,
        checkers: space.checkers,
        gammon,
        compressed,
        dist,
        gammon_dist,
    })
}

#[cfg(test)]
mod tests {
    use super::{encode_gnubg_one_sided, read_gnubg_one_sided};
    use crate::format::fixtures::{gnubg_bytes, table};
    use crate::format::{FormatError, quantized};
    use crate::numeric::quantize;
    use crate::one_sided::OneSided;
    use crate::position::Space;
    use std::io;

    use std::fs;

    #[test]
    fn gnubg_one_sided_layouts_agree_with_the_exact_table() {
        let t = table();
        let n = t.space.len();
        let comp = gnubg_bytes(t, true, true).unwrap();
        let plain = gnubg_bytes(t, false, true).unwrap();
        assert_eq!(&comp[..40], b"gnubg-OS-06-15-1-1-0xxxxxxxxxxxxxxxxxxx\n");
        assert_eq!(&plain[..40], b"gnubg-OS-06-15-1-0-0xxxxxxxxxxxxxxxxxxx\n");
        assert_eq!(plain.len(), 40 + n * 128);
        // Compressed index: position 0 is one entry of each distribution, at offset 0.
        assert_eq!(&comp[40..48], &[0, 0, 0, 0, 1, 0, 1, 0]);
        assert_eq!(&comp[48..52], &2u32.to_le_bytes());
        assert_eq!(&comp[40 + 8 * n..40 + 8 * n + 4], &[0xFF; 4]);

        let c = read_gnubg_one_sided(&comp).unwrap();
        let p = read_gnubg_one_sided(&plain).unwrap();
        assert!(c.compressed && !p.compressed && c.gammon);
        assert_eq!((c.points, c.checkers), (6, 15));
        assert_eq!((&c.dist, &c.gammon_dist), (&p.dist, &p.gammon_dist));
        let g = c.gammon_dist.as_ref().unwrap();
        assert_eq!(c.dist.len(), n);
        let want = |x: &[f64]| -> [u16; 32] {
            std::array::from_fn(|k| quantize(x.get(k).copied().unwrap_or(0.0)))
        };
        for (i, (d, gd)) in c.dist.iter().zip(g).enumerate() {
            assert_eq!(*d, want(t.distribution(i as u32)), "position {i}");
            assert_eq!(
                *gd,
                want(t.gammon_distribution(i as u32).unwrap()),
                "gammon {i}"
            );
        }
        let mut off = [0u16; 32];
        off[0] = 0xFFFF;
        assert_eq!((c.dist[0], g[0]), (off, off));
        // Two checkers on the 6 point: P(1 roll) = 1/9, P(2 rolls) = 0.671296 = 145/216.
        let i = t.space.index(&[0, 0, 0, 0, 0, 2]) as usize;
        assert!((t.distribution(i as u32)[2] - 0.671296).abs() < 1e-6);
        assert_eq!(c.dist[i][..3], [0, quantize(1.0 / 9.0), quantize(0.671296)]);
        assert_eq!(quantize(0.671296), 43993);
    }

    #[test]
    fn gnubg_one_sided_without_gammon_and_with_few_checkers() {
        let t = OneSided::build(Space::new(4, 3).unwrap(), false);
        assert!(matches!(
            gnubg_bytes(&t, true, true),
            Err(FormatError::GnubgExport(_))
        ));
        for compressed in [true, false] {
            let b = gnubg_bytes(&t, compressed, false).unwrap();
            let want = format!(
                "gnubg-OS-04-03-0-{}-0xxxxxxxxxxxxxxxxxxx\n",
                u8::from(compressed)
            );
            assert_eq!(&b[..40], want.as_bytes());
            let r = read_gnubg_one_sided(&b).unwrap();
            assert_eq!(
                (r.points, r.checkers, r.gammon, r.compressed),
                (4, 3, false, compressed)
            );
            assert!(r.gammon_dist.is_none());
            assert_eq!(r.dist.len(), 35);
            for (i, d) in r.dist.iter().enumerate() {
                assert_eq!(d, &quantized(t.distribution(i as u32)));
            }
            if compressed {
                assert_eq!(&b[40..46], &[0, 0, 0, 0, 1, 0]); // 6-byte index entries
            } else {
                assert_eq!(b.len(), 40 + 35 * 64);
            }
        }
    }

    #[test]
    fn gnubg_one_sided_damage_is_reported_never_panics() {
        let t = OneSided::build(Space::new(3, 3).unwrap(), false);
        let b = gnubg_bytes(&t, true, false).unwrap();
        for k in 0..b.len() {
            assert!(
                matches!(
                    read_gnubg_one_sided(&b[..k]),
                    Err(FormatError::Truncated { .. })
                ),
                "prefix {k}"
            );
        }
        for k in 0..b.len() {
            let mut d = b.clone();
            d[k] ^= 0xFF;
            let _ = read_gnubg_one_sided(&d);
        }
        let mut d = b.clone();
        d[44] = 33; // nz
        assert!(matches!(
            read_gnubg_one_sided(&d),
            Err(FormatError::GnubgData(_))
        ));
        let mut d = b.clone();
        d[19] = b'1';
        assert!(matches!(
            read_gnubg_one_sided(&d),
            Err(FormatError::GnubgUnsupported(_))
        ));
        let mut d = b.clone();
        d[..5].copy_from_slice(b"GNUBG");
        let e = read_gnubg_one_sided(&d).unwrap_err();
        assert!(matches!(e, FormatError::GnubgHeader { .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("gnubg header \"GNUBG-OS-03-03-0-1-0x"),
            "{e}"
        );
        // A header claiming a huge table is refused before anything is allocated for it.
        for z in [b'0', b'1'] {
            let mut big = b"gnubg-OS-18-15-1-0-0xxxxxxxxxxxxxxxxxxx\n".to_vec();
            big[17] = z;
            assert!(matches!(
                read_gnubg_one_sided(&big),
                Err(FormatError::Truncated { .. })
            ));
        }
        let mut d = b.clone();
        d[9..11].copy_from_slice(b"6x");
        assert!(matches!(
            read_gnubg_one_sided(&d),
            Err(FormatError::GnubgHeader { .. })
        ));
    }

    /// Reads gnubg's own gnubg_os0.bd (Debian's gnubg-data ships it) when present: writing
    /// back what was read must give the same bytes, and its distributions must match the exact
    /// table's up to gnubg's choices among near-equal plays and its integer arithmetic. Set
    /// ROLLSIM_GNUBG_OS0 to its path, or it is looked for where Debian installs it; skipped
    /// when absent, unless required (`rollsim_core::testing`).
    #[test]
    fn gnubg_shipped_one_sided_database() {
        let path = std::env::var("ROLLSIM_GNUBG_OS0")
            .unwrap_or_else(|_| "/usr/share/gnubg/gnubg_os0.bd".into());
        let found = fs::read(&path).map_err(|e| format!("{path}: {e}"));
        let test = "gnubg_shipped_one_sided_database";
        let Some(bytes) = rollsim_core::testing::need(test, "gnubg's gnubg_os0.bd", found) else {
            return;
        };
        let r = read_gnubg_one_sided(&bytes).unwrap();
        assert_eq!(
            (r.points, r.checkers, r.gammon, r.compressed),
            (6, 15, true, true)
        );
        let g = r.gammon_dist.as_ref().unwrap();
        let mut again = io::Cursor::new(Vec::new());
        let dist = |i: usize, gammon: bool| if gammon { g[i] } else { r.dist[i] };
        encode_gnubg_one_sided(Space::new(6, 15).unwrap(), true, true, dist, &mut again).unwrap();
        let again = again.into_inner();
        assert!(again == bytes, "re-encoding gnubg_os0.bd changed it");

        let t = table();
        let (mut same, mut total) = (0, 0);
        for (i, (d, gd)) in r.dist.iter().zip(g).enumerate() {
            let ours = quantized(t.distribution(i as u32));
            let gours = quantized(t.gammon_distribution(i as u32).unwrap());
            let mean: f64 = d
                .iter()
                .enumerate()
                .map(|(k, &v)| k as f64 * f64::from(v))
                .sum();
            let mean = mean / 65535.0;
            assert!(
                (mean - t.mean[i]).abs() < 5e-4,
                "position {i}: {mean} vs {}",
                t.mean[i]
            );
            assert_eq!(d.iter().map(|&v| u32::from(v)).sum::<u32>(), 0xFFFF);
            assert!(
                gours.iter().zip(gd).all(|(a, b)| a.abs_diff(*b) <= 2),
                "gammon {i}"
            );
            same += ours.iter().zip(d).filter(|(a, b)| a == b).count();
            total += 32;
        }
        assert!(
            same as f64 > 0.95 * total as f64,
            "{same} of {total} entries agree"
        );
    }
}
