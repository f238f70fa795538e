//! Shamir's secret sharing as sops uses it for key groups (its `shamir` package, from
//! HashiCorp Vault): every byte of the data key is the value at 0 of a random polynomial over
//! GF(2⁸) with the AES polynomial x⁸+x⁴+x³+x+1, of degree `threshold - 1`. Share `i` (from 1)
//! is the polynomial's values at `x = i`, one per key byte, then `i` itself as a last byte.
//!
//! Written here because `--rotate` of a file with several key groups must split a new data key
//! exactly as sops combines it (and combine the old one as sops split it); no crate writes
//! sops's layout. Checked against FIPS-197's multiplication example and sops's own field
//! tests, and against the real sops both ways (it opens what this splits, and the shares sops
//! split open the old values here).

use zeroize::Zeroizing;

use super::model::refuse;
use hyperseal::Error;

/// a·b in GF(2⁸): shift-and-add over b's bits, reduced by the AES polynomial, with no branch on
/// the (secret) operands.
fn mul(a: u8, b: u8) -> u8 {
    let mut acc = 0u8;
    for i in (0..8).rev() {
        let bit = (b >> i) & 1;
        acc = (acc << 1) ^ (0u8.wrapping_sub(acc >> 7) & 0x1b) ^ (0u8.wrapping_sub(bit) & a);
    }
    acc
}

/// a⁻¹ = a²⁵⁴ (0 for 0).
fn inv(a: u8) -> u8 {
    let mut out = 1u8;
    let mut base = a;
    let mut e = 254u8;
    while e > 0 {
        if e & 1 == 1 {
            out = mul(out, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    out
}

/// Splits `secret` into `parts` shares, any `threshold` of which give it back.
pub(crate) fn split(secret: &[u8], parts: usize, threshold: usize) -> Result<Vec<Zeroizing<Vec<u8>>>, Error> {
    if !(2..=255).contains(&threshold) || parts < threshold || parts > 255 || secret.is_empty() {
        return Err(refuse(format!("a Shamir split of {parts} parts with threshold {threshold}")));
    }
    let mut out: Vec<Zeroizing<Vec<u8>>> = (0..parts)
        .map(|i| {
            let mut share = Zeroizing::new(vec![0u8; secret.len() + 1]);
            share[secret.len()] = i as u8 + 1;
            share
        })
        .collect();
    let mut coeffs = Zeroizing::new(vec![0u8; threshold]);
    for (idx, &byte) in secret.iter().enumerate() {
        coeffs[0] = byte;
        hyperseal::fill_random(&mut coeffs[1..])?;
        for (i, share) in out.iter_mut().enumerate() {
            let x = i as u8 + 1;
            // Horner's rule from the highest coefficient.
            share[idx] = coeffs.iter().rev().fold(0u8, |acc, &c| mul(acc, x) ^ c);
        }
    }
    Ok(out)
}

/// The secret from `shares` (at least the threshold, distinct `x`, equal lengths): Lagrange
/// interpolation at 0.
pub(crate) fn combine(shares: &[&[u8]]) -> Result<Zeroizing<Vec<u8>>, Error> {
    let len = shares.first().map_or(0, |s| s.len());
    if shares.len() < 2 || len < 2 || shares.iter().any(|s| s.len() != len) {
        return Err(refuse("the key groups' shares do not fit together"));
    }
    let xs: Vec<u8> = shares.iter().map(|s| s[len - 1]).collect();
    if xs.iter().enumerate().any(|(i, x)| *x == 0 || xs[..i].contains(x)) {
        return Err(refuse("two key groups hold the same Shamir share"));
    }
    let mut secret = Zeroizing::new(vec![0u8; len - 1]);
    for (i, &xi) in xs.iter().enumerate() {
        // The basis polynomial of share i at 0: ∏ xj / (xi + xj) over j ≠ i.
        let basis = xs
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .fold(1u8, |b, (_, &xj)| mul(b, mul(xj, inv(xi ^ xj))));
        for (idx, out) in secret.iter_mut().enumerate() {
            *out ^= mul(shares[i][idx], basis);
        }
    }
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_is_aes_s() {
        // FIPS-197 §4.2's example, and sops's own field tests.
        assert_eq!(mul(0x57, 0x83), 0xc1);
        assert_eq!(mul(0x57, 0x13), 0xfe);
        assert_eq!(mul(3, 7), 9);
        assert_eq!(mul(3, 0), 0);
        assert_eq!(mul(6, inv(3)), 2);
        for a in 1..=255u8 {
            assert_eq!(mul(a, inv(a)), 1, "{a}");
        }
    }

    #[test]
    fn any_threshold_of_the_shares_gives_the_secret_back() {
        let secret: Vec<u8> = (0..32).collect();
        let shares = split(&secret, 5, 3).unwrap();
        assert!(shares.iter().all(|s| s.len() == 33));
        for pick in [[0, 1, 2], [4, 2, 0], [1, 3, 4]] {
            let chosen: Vec<&[u8]> = pick.iter().map(|&i| &shares[i][..]).collect();
            assert_eq!(&combine(&chosen).unwrap()[..], &secret[..]);
        }
        // Fewer than the threshold give something else.
        assert_ne!(&combine(&[&shares[0][..], &shares[1][..]]).unwrap()[..], &secret[..]);
        assert!(combine(&[&shares[0][..], &shares[0][..]]).is_err());
        assert!(split(&secret, 2, 3).is_err());
    }
}
