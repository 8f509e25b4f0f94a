//! rollsim's own format, version 1 (see the table in [`super`]): exact `f64` values, one
//! checksum.

use super::*;

/// Checks that a one-sided table's vectors have the lengths its space and `len` imply.
pub(super) fn check_one_sided(t: &OneSided) -> Result<()> {
    let n = valid_space(t.space)?.len();
    let block = |what: &str, mean: &[f64], len: usize, dist: &[f64]| {
        if mean.len() != n || len == 0 || dist.len() != n * len {
            return Err(FormatError::Table(format!(
                "{what}: {} means and {} entries of length {len} for {n} positions",
                mean.len(),
                dist.len()
            )));
        }
        Ok(())
    };
    block("bear-off", &t.mean, t.len, &t.dist)?;
    if let Some((gm, gl, gd)) = &t.gammon {
        block("gammon", gm, *gl, gd)?;
    }
    Ok(())
}

/// Writes per position its mean and then its `len` probabilities.
fn write_block(out: &mut impl Write, mean: &[f64], len: usize, dist: &[f64]) -> io::Result<()> {
    let mut buf = Vec::with_capacity(8 * (len + 1));
    for (&m, d) in mean.iter().zip(dist.chunks_exact(len)) {
        buf.clear();
        buf.extend(m.to_le_bytes());
        buf.extend(d.iter().flat_map(|p| p.to_le_bytes()));
        out.write_all(&buf)?;
    }
    Ok(())
}

pub(crate) fn plural(n: u32, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Writes a table in rollsim's exact format (see the module docs).
pub fn write_rollsim(t: &Table, out: &mut impl Write) -> Result<()> {
    let (kind, space, count, len, gammon_len, name) = match t {
        Table::One(o) => {
            check_one_sided(o)?;
            let gl = o.gammon.as_ref().map_or(0, |g| g.1);
            (1u32, o.space, o.space.len() as u64, o.len, gl, "one-sided")
        }
        Table::Two(w) => {
            let n = valid_space(w.space)?.len();
            if w.win.len() != n * n {
                return Err(FormatError::Table(format!(
                    "{} win probabilities for {n} x {n} pairs",
                    w.win.len()
                )));
            }
            if w.cubeful.as_ref().is_some_and(|c| c.len() != n * n) {
                return Err(FormatError::Table(format!(
                    "cubeful equities for other than {n} x {n} pairs"
                )));
            }
            (2, w.space, (n * n) as u64, 0, 0, "two-sided")
        }
    };
    let cubeful = matches!(t, Table::Two(w) if w.cubeful.is_some());
    let len = u32::try_from(len)
        .map_err(|_| FormatError::Table(format!("{len} entries per distribution")))?;
    let mut description = format!(
        "rollsim {name} bearoff, {} on {}{}{}",
        plural(space.checkers, "checker"),
        plural(space.points, "point"),
        if gammon_len > 0 { ", gammon" } else { "" },
        if cubeful { ", cubeful" } else { "" }
    );
    description.truncate(DESCRIPTION); // ASCII, and at most 60 bytes anyway
    let mut header = Vec::with_capacity(HEADER);
    header.extend(FORMAT.head());
    for v in [
        kind,
        space.points,
        space.checkers,
        u32::from(gammon_len > 0) | u32::from(cubeful) << 1,
        len,
    ] {
        header.extend(v.to_le_bytes());
    }
    header.extend(count.to_le_bytes());
    header.extend((gammon_len as u64).to_le_bytes());
    header.extend(format!("{description:DESCRIPTION$}").bytes());
    debug_assert_eq!(header.len(), HEADER);

    let mut w = CrcWriter::new(io::BufWriter::with_capacity(1 << 16, out));
    w.write_all(&header)?;
    match t {
        Table::One(o) => {
            write_block(&mut w, &o.mean, o.len, &o.dist)?;
            if let Some((gm, gl, gd)) = &o.gammon {
                write_block(&mut w, gm, *gl, gd)?;
            }
        }
        Table::Two(s) => {
            let mut buf = Vec::with_capacity(1 << 16);
            for chunk in s.win.chunks(1 << 13) {
                buf.clear();
                buf.extend(chunk.iter().flat_map(|p| p.to_le_bytes()));
                w.write_all(&buf)?;
            }
            for chunk in s.cubeful.iter().flat_map(|c| c.chunks(1 << 11)) {
                buf.clear();
                buf.extend(chunk.iter().flatten().flat_map(|e| e.to_le_bytes()));
                w.write_all(&buf)?;
            }
        }
    }
    let crc = w.crc();
    w.inner.write_all(&crc.to_le_bytes())?;
    Ok(w.inner.flush()?)
}

fn f64s(bytes: &[u8]) -> impl Iterator<Item = f64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
}

/// Reads per position a mean and `len` probabilities, from `n · 8 · (len + 1)` bytes.
fn read_block(bytes: &[u8], len: usize) -> (Vec<f64>, Vec<f64>) {
    let n = bytes.len() / (8 * (len + 1));
    let (mut mean, mut dist) = (Vec::with_capacity(n), Vec::with_capacity(n * len));
    for rec in bytes.chunks_exact(8 * (len + 1)) {
        mean.push(f64::from_le_bytes(rec[..8].try_into().unwrap()));
        dist.extend(f64s(&rec[8..]));
    }
    (mean, dist)
}

/// Reads a table in rollsim's format, checking the magic, version, kind, header fields, the
/// exact size the header implies, then the CRC.
pub fn read_rollsim(bytes: &[u8]) -> Result<Table> {
    let found = bytes.len() as u64;
    let minimum = (HEADER + 4) as u64;
    FORMAT.check_head(bytes, minimum)?;
    if found < minimum {
        return Err(FormatError::Truncated {
            expected: minimum,
            found,
        });
    }
    let [kind, points, checkers, flags, len] = [12, 16, 20, 24, 28].map(|at| u32_at(bytes, at));
    let (count, gammon_len) = (u64_at(bytes, 32), u64_at(bytes, 40));
    if kind != 1 && kind != 2 {
        return Err(FormatError::Kind(kind));
    }
    let space = Space::new(points, checkers).map_err(|e| FormatError::Header(e.to_string()))?;
    let n = space.len() as u64;
    let bad = |why: String| Err(FormatError::Header(why));
    if flags & !3 != 0 || (kind == 2 && flags & 1 != 0) || (kind == 1 && flags & 2 != 0) {
        return bad(format!("unknown flags {flags:#x}"));
    }
    let gammon = flags & 1 != 0;
    let cubeful = flags & 2 != 0;
    if gammon != (gammon_len > 0) {
        return bad(format!(
            "gammon flag {} with {gammon_len} entries per gammon distribution",
            flags & 1
        ));
    }
    let expected = if kind == 1 {
        if count != n || len == 0 {
            return bad(format!(
                "{count} positions of {len} entries; the space has {n} positions"
            ));
        }
        let block = |len: u64| u128::from(n) * 8 * (u128::from(len) + 1);
        HEADER as u128 + block(len.into()) + if gammon { block(gammon_len) } else { 0 } + 4
    } else {
        if count != n * n || len != 0 {
            return bad(format!(
                "{count} pairs of {len} entries; the space has {n} x {n} pairs"
            ));
        }
        HEADER as u128 + u128::from(count) * 8 * if cubeful { 4 } else { 1 } + 4
    };
    exact_size(expected, bytes.len())?;
    let body = check_crc(bytes)?;
    let data = &body[HEADER..];
    let table = if kind == 1 {
        let len = len as usize;
        let (main, rest) = data.split_at(space.len() * 8 * (len + 1));
        let (mean, dist) = read_block(main, len);
        let gammon = gammon.then(|| {
            let gl = gammon_len as usize;
            let (gm, gd) = read_block(rest, gl);
            (gm, gl, gd)
        });
        Table::One(OneSided {
            space,
            mean,
            len,
            dist,
            gammon,
        })
    } else {
        let (win, cube) = data.split_at(8 * count as usize);
        Table::Two(TwoSided {
            space,
            win: f64s(win).collect(),
            cubeful: cubeful.then(|| {
                cube.chunks_exact(24)
                    .map(|c| {
                        let mut e = f64s(c);
                        std::array::from_fn(|_| e.next().expect("24 bytes are 3 f64"))
                    })
                    .collect()
            }),
        })
    };
    check_values(&table)?;
    Ok(table)
}

/// Refuses values no table can hold, which a valid checksum does not rule out (a file written
/// by another program, say): probabilities outside [0, 1], equities outside [-1, 1], expected
/// rolls that are negative, anything not finite. The n-tuple loader refuses non-finite
/// weights alike.
fn check_values(t: &Table) -> Result<()> {
    let bad = |what: &str, v: f64| {
        Err(FormatError::Table(format!(
            "{what} {v} is not a possible value"
        )))
    };
    // Exact tables may round a sum to an ulp past a bound.
    const SLACK: f64 = 1e-12;
    let probability = |v: f64| (-SLACK..=1.0 + SLACK).contains(&v);
    match t {
        Table::One(o) => {
            let means = o.mean.iter().chain(o.gammon.iter().flat_map(|(m, _, _)| m));
            if let Some(&v) = means.into_iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                return bad("an expected number of rolls", v);
            }
            let probs = o.dist.iter().chain(o.gammon.iter().flat_map(|(_, _, d)| d));
            if let Some(&v) = probs.into_iter().find(|v| !probability(**v)) {
                return bad("a probability", v);
            }
        }
        Table::Two(w) => {
            if let Some(&v) = w.win.iter().find(|v| !probability(**v)) {
                return bad("a winning chance", v);
            }
            let equities = w.cubeful.iter().flatten().flatten();
            if let Some(&v) = equities
                .into_iter()
                .find(|v| !(-1.0 - SLACK..=1.0 + SLACK).contains(*v))
            {
                return bad("an equity", v);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{read_rollsim, write_rollsim};
    use crate::format::HEAD_BYTES;
    use crate::format::fixtures::{bits, rollsim_bytes, same_one_sided, table, two_sided};
    use crate::format::{
        FormatError, GNUBG_HEADER, HEADER, Table, read_gnubg_one_sided, read_gnubg_two_sided,
        read_whole_bytes, write_gnubg_one_sided, write_gnubg_two_sided,
    };
    use crate::numeric::quantize;
    use crate::one_sided::OneSided;
    use crate::position::Space;
    use crate::two_sided::TwoSided;
    use std::fs;
    use std::io;

    #[test]
    fn impossible_values_under_a_valid_checksum_are_refused() {
        let space = Space::new(3, 3).unwrap();
        for (at, v) in [(5, f64::NAN), (7, -0.5), (9, 1.5)] {
            let mut t = OneSided::build(space, false);
            t.dist[at] = v;
            let mut bytes = Vec::new();
            write_rollsim(&Table::One(t), &mut bytes).unwrap();
            let err = read_rollsim(&bytes).unwrap_err().to_string();
            assert!(err.contains("not a possible value"), "{err}");
        }
        let mut bytes = Vec::new();
        write_rollsim(&Table::One(OneSided::build(space, false)), &mut bytes).unwrap();
        assert!(read_rollsim(&bytes).is_ok());
    }

    #[test]
    fn reading_whole_is_planned_from_the_head() {
        let t = table();
        let gnubg = |compressed| {
            let mut b = io::Cursor::new(Vec::new());
            write_gnubg_one_sided(t, compressed, true, &mut b).unwrap();
            b.into_inner()
        };
        let packed = gnubg(true);
        let size = packed.len() as u64;
        let decoded = read_gnubg_one_sided(&packed).unwrap();
        let held = (decoded.dist.len() + decoded.gammon_dist.as_ref().unwrap().len()) * 64;
        assert_eq!(
            read_whole_bytes(&packed[..HEAD_BYTES], size),
            size + held as u64
        );
        assert!(held as u64 > size, "compressed files grow when decoded");
        // Every other format decodes to no more than its file.
        let plain = gnubg(false);
        let size = plain.len() as u64;
        assert_eq!(read_whole_bytes(&plain[..HEAD_BYTES], size), 2 * size);
        let rollsim = rollsim_bytes(&Table::Two(two_sided()));
        assert_eq!(read_whole_bytes(&rollsim[..HEAD_BYTES], 1000), 2000);
        assert_eq!(read_whole_bytes(b"short", 10), 20);
    }

    #[test]
    fn rollsim_round_trip_one_sided_with_gammon() {
        let t = table();
        assert!(
            t.gammon.as_ref().unwrap().1 != t.len,
            "the two lengths differ in practice"
        );
        // Round trip through a file written atomically.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("os6.rsb");
        let borrowed = Table::One(OneSided {
            space: t.space,
            mean: t.mean.clone(),
            len: t.len,
            dist: t.dist.clone(),
            gammon: t.gammon.clone(),
        });
        rollsim_core::files::write_atomically(&path, |w| write_rollsim(&borrowed, w)).unwrap();
        let bytes = fs::read(&path).unwrap();
        fs::remove_dir_all(dir).unwrap();
        assert_eq!(&bytes[..8], b"RSBEAROF");
        assert_eq!(
            &bytes[48..112],
            format!(
                "{:64}",
                "rollsim one-sided bearoff, 15 checkers on 6 points, gammon"
            )
            .as_bytes()
        );
        let gl = t.gammon.as_ref().unwrap().1;
        assert_eq!(bytes.len(), HEADER + 54_264 * 8 * (t.len + 1 + gl + 1) + 4);
        match read_rollsim(&bytes).unwrap() {
            Table::One(back) => same_one_sided(t, &back),
            other => panic!("read {other:?}"),
        }
    }

    #[test]
    fn cubeful_tables_round_trip_and_export() {
        let space = Space::new(3, 3).unwrap();
        let t = TwoSided::build_with_progress(space, true, &|_| {});
        let n = space.len();
        let bytes = rollsim_bytes(&Table::Two(TwoSided {
            space,
            win: t.win.clone(),
            cubeful: t.cubeful.clone(),
        }));
        assert_eq!(bytes.len(), HEADER + 8 * 4 * n * n + 4);
        match read_rollsim(&bytes).unwrap() {
            Table::Two(back) => {
                assert_eq!(bits(&back.win), bits(&t.win));
                let flat =
                    |c: &Vec<[f64; 3]>| c.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    flat(back.cubeful.as_ref().unwrap()),
                    flat(t.cubeful.as_ref().unwrap())
                );
            }
            Table::One(_) => panic!("read a two-sided table as one-sided"),
        }
        let mut g = Vec::new();
        write_gnubg_two_sided(&t, &mut g).unwrap();
        assert_eq!(&g[..16], b"gnubg-TS-03-03-1");
        assert_eq!(g.len(), GNUBG_HEADER + 8 * n * n);
        let r = read_gnubg_two_sided(&g).unwrap();
        assert!(r.cubeful);
        // The record of pair 5: cubeless, then owned, centred, opponent owns.
        let rec = &g[GNUBG_HEADER + 8 * 5..GNUBG_HEADER + 8 * 6];
        let v = |k: usize| u16::from_le_bytes([rec[2 * k], rec[2 * k + 1]]);
        assert_eq!(v(0), quantize(t.win[5]));
        for k in 0..3 {
            assert_eq!(
                v(k + 1),
                quantize((t.cubeful.as_ref().unwrap()[5][k] + 1.0) / 2.0)
            );
        }
    }

    #[test]
    fn rollsim_round_trip_two_sided() {
        let t = two_sided();
        let bytes = rollsim_bytes(&Table::Two(TwoSided {
            space: t.space,
            win: t.win.clone(),
            cubeful: None,
        }));
        assert_eq!(bytes.len(), HEADER + 8 * 100 + 4);
        match read_rollsim(&bytes).unwrap() {
            Table::Two(back) => {
                assert_eq!(back.space, t.space);
                assert_eq!(bits(&back.win), bits(&t.win));
            }
            other => panic!("read {other:?}"),
        }
    }

    #[test]
    fn rollsim_damage_is_reported_never_panics() {
        let bytes = rollsim_bytes(&Table::Two(two_sided()));
        let total = bytes.len() as u64;
        for k in 0..bytes.len() {
            match read_rollsim(&bytes[..k]) {
                Err(FormatError::Truncated { expected, found }) => {
                    assert_eq!(found, k as u64);
                    assert!(
                        expected == total || (k < HEADER + 4 && expected == (HEADER + 4) as u64)
                    );
                }
                other => panic!("prefix {k}: {other:?}"),
            }
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            matches!(read_rollsim(&longer), Err(FormatError::Oversized { expected, found }) if expected == total && found == total + 1)
        );
        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert!(matches!(read_rollsim(&magic), Err(FormatError::BadMagic)));
        let mut version = bytes.clone();
        version[8] = 2;
        assert!(matches!(
            read_rollsim(&version),
            Err(FormatError::Version(2))
        ));
        let mut data = bytes.clone();
        data[HEADER + 17] ^= 0x10;
        assert!(matches!(
            read_rollsim(&data),
            Err(FormatError::Checksum { .. })
        ));
        // Any single flipped byte anywhere is an error, never a panic.
        for k in 0..bytes.len() {
            let mut b = bytes.clone();
            b[k] ^= 0xFF;
            assert!(read_rollsim(&b).is_err(), "flipped byte {k} went unnoticed");
        }
        // And a damaged one-sided header (huge len) is refused without allocating.
        let os = Table::One(OneSided::build(Space::new(2, 2).unwrap(), false));
        let mut b = rollsim_bytes(&os);
        b[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            read_rollsim(&b),
            Err(FormatError::Truncated { .. })
        ));
        assert!(format!("{}", read_rollsim(&b).unwrap_err()).starts_with("truncated: expected "));
    }
}
