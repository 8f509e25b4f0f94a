//! gnubg's two-sided `.bd` files: written from a table or row by row, and read.

use super::*;

/// Writes `t` as gnubg's two-sided database: the header, then per record [`quantize`] of the
/// win probability (gnubg's equity `value / 32767.5 − 1`), and with cubeful equities e the
/// three [`quantize`]`((e + 1) / 2)`.
pub fn write_gnubg_two_sided(t: &TwoSided, out: &mut impl Write) -> Result<()> {
    let space = valid_space(t.space)?;
    let n = space.len();
    if t.win.len() != n * n {
        return Err(FormatError::Table(format!(
            "{} win probabilities for {n} x {n} pairs",
            t.win.len()
        )));
    }
    if t.cubeful.as_ref().is_some_and(|c| c.len() != n * n) {
        return Err(FormatError::Table(format!(
            "cubeful equities for other than {n} x {n} pairs"
        )));
    }
    write_gnubg_two_sided_rows(space, t.cubeful.is_some(), out, |us0, buf| {
        let values = if t.cubeful.is_some() { 4 } else { 1 };
        for (k, record) in buf.chunks_exact_mut(values).enumerate() {
            let i = us0 * n + k;
            record[0] = quantize(t.win[i]);
            if let Some(c) = &t.cubeful {
                for (r, e) in record[1..].iter_mut().zip(c[i]) {
                    *r = quantize((e + 1.0) / 2.0);
                }
            }
        }
        Ok(())
    })
}

/// Writes gnubg's two-sided database over `space`: the header, then the records in gnubg's
/// order (`us · n + them`), `fill(us0, buf)` giving those from `us0` on (whole rows of n
/// records of 1 or, `cubeful`, 4 values: cubeless, owned, centred, opponent owns). Refuses
/// files gnubg cannot address.
pub fn write_gnubg_two_sided_rows(
    space: Space,
    cubeful: bool,
    out: &mut impl Write,
    mut fill: impl FnMut(usize, &mut [u16]) -> Result<()>,
) -> Result<()> {
    let space = valid_space(space)?;
    let n = space.len();
    let values = if cubeful { 4 } else { 1 };
    gnubg_size_limit(GNUBG_HEADER as u64 + 2 * values as u64 * (n * n) as u64)?;
    let header = format!(
        "gnubg-TS-{:02}-{:02}-{}xxxxxxxxxxxxxxxxxxxxxxx\n",
        space.points,
        space.checkers,
        u8::from(cubeful)
    );
    debug_assert_eq!(header.len(), GNUBG_HEADER);
    out.write_all(header.as_bytes())?;
    // Rows a block: about 4 MB of records at a time.
    let rows = ((4 << 20) / (2 * values * n)).clamp(1, n);
    let mut buf = vec![0u16; rows * n * values];
    let mut bytes = Vec::with_capacity(2 * buf.len());
    for us0 in (0..n).step_by(rows) {
        let count = rows.min(n - us0);
        let block = &mut buf[..count * n * values];
        fill(us0, block)?;
        bytes.clear();
        bytes.extend(block.iter().flat_map(|v| v.to_le_bytes()));
        out.write_all(&bytes)?;
    }
    Ok(out.flush()?)
}

/// Reads a gnubg two-sided database (cubeless or cubeful); keeps each record's first,
/// cubeless, value.
pub fn read_gnubg_two_sided(bytes: &[u8]) -> Result<GnubgTwoSided> {
    let h = GnubgHeader::new(bytes)?;
    h.expect_kind(b"TS")?;
    let space = h.space()?;
    let cubeful = h.flag(15, "cubeful")?;
    let n = space.len() as u128;
    let record = if cubeful { 8 } else { 2 };
    exact_size(GNUBG_HEADER as u128 + n * n * record as u128, bytes.len())?;
    let equity = bytes[GNUBG_HEADER..]
        .chunks_exact(record)
        .map(|r| u16_at(r, 0))
        .collect();
    Ok(GnubgTwoSided {
        points: space.points,
        checkers: space.checkers,
        cubeful,
        equity,
    })
}

#[cfg(test)]
mod tests {
    use super::{read_gnubg_two_sided, write_gnubg_two_sided};
    use crate::format::fixtures::two_sided;
    use crate::format::{FormatError, read_gnubg_one_sided};
    use crate::numeric::quantize;

    #[test]
    fn gnubg_two_sided() {
        let t = two_sided();
        let mut b = Vec::new();
        write_gnubg_two_sided(&t, &mut b).unwrap();
        assert_eq!(&b[..40], b"gnubg-TS-03-02-0xxxxxxxxxxxxxxxxxxxxxxx\n");
        assert_eq!(b.len(), 40 + 2 * 100);
        let r = read_gnubg_two_sided(&b).unwrap();
        assert_eq!((r.points, r.checkers, r.cubeful), (3, 2, false));
        assert_eq!(
            r.equity,
            t.win.iter().map(|&p| quantize(p)).collect::<Vec<_>>()
        );
        assert_eq!(r.equity[..3], [0xFFFF, 0, 21845]);
        assert!(matches!(
            read_gnubg_one_sided(&b),
            Err(FormatError::GnubgUnsupported(_))
        ));
        assert!(matches!(
            read_gnubg_two_sided(&b[..239]),
            Err(FormatError::Truncated {
                expected: 240,
                found: 239
            })
        ));
        // A cubeful file: four values per record, the first kept.
        let mut cubeful = b"gnubg-TS-03-02-1xxxxxxxxxxxxxxxxxxxxxxx\n".to_vec();
        for k in 0..100u16 {
            for v in [k, 1, 2, 3] {
                cubeful.extend(v.to_le_bytes());
            }
        }
        let r = read_gnubg_two_sided(&cubeful).unwrap();
        assert!(r.cubeful);
        assert_eq!(r.equity, (0..100).collect::<Vec<u16>>());
    }
}
