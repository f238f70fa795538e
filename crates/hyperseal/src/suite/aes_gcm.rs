//! AES-256-GCM from one of two libraries, chosen per CPU by measurement. Both compute the same
//! standard AES-256-GCM (tested below: each opens the other's output, and both pass Wycheproof),
//! so the choice changes speed only, never bytes.
//!
//! (The portable build has a third, RustCrypto's, in `portable.rs`; it is tested here too.)
//!
//! Why two: ring 0.17 carries BoringSSL's VAES + VPCLMULQDQ code for AVX2 CPUs, which aws-lc 1.x
//! does not have; aws-lc has AVX-512 code, which ring does not. Measured, 64 KiB chunks, one
//! core: on the development machine (AMD EPYC Zen 3 class, VAES/AVX2, no AVX-512) ring 7.2–7.4
//! GB/s vs aws-lc 4.2 GB/s; the project brief measured aws-lc 9 GB/s vs ring 5.2 GB/s on a CPU
//! with AVX-512. Without VAES both run the same AES-NI code.

#[cfg(not(target_arch = "wasm32"))]
use ring::aead as r;

#[cfg(not(target_arch = "wasm32"))]
use super::TAG_LEN;

/// Which native library runs AES-256-GCM (the portable build has only RustCrypto's, whatever
/// this says; see [`Suite::backend`](crate::Suite::backend)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AesGcmBackend {
    /// aws-lc (via aws-lc-rs): fastest with AVX-512.
    AwsLc,
    /// ring: fastest on AVX2 CPUs with VAES.
    Ring,
}

impl AesGcmBackend {
    /// The faster backend on this CPU, decided once per process (the bytes are the same either
    /// way: the tests run both and compare them).
    pub fn preferred() -> AesGcmBackend {
        static CHOICE: std::sync::OnceLock<AesGcmBackend> = std::sync::OnceLock::new();
        *CHOICE.get_or_init(Self::detect)
    }

    fn detect() -> AesGcmBackend {
        #[cfg(target_arch = "x86_64")]
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return AesGcmBackend::Ring;
        }
        AesGcmBackend::AwsLc
    }

    /// The library's name.
    pub fn name(self) -> &'static str {
        match self {
            AesGcmBackend::AwsLc => "aws-lc",
            AesGcmBackend::Ring => "ring",
        }
    }
}

/// A ring AES-256-GCM key. ring seals and opens in place only, so the out-of-place calls copy
/// the chunk into the output first (it is then hot in cache for the in-place pass).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) struct RingKey(r::LessSafeKey);

#[cfg(not(target_arch = "wasm32"))]
#[cfg_attr(portable_backend, allow(dead_code))]
impl RingKey {
    pub(crate) fn new(key: &[u8; 32]) -> RingKey {
        RingKey(r::LessSafeKey::new(r::UnboundKey::new(&r::AES_256_GCM, key).expect("32-byte key")))
    }

    /// Seals `buf[..len-16]` in place and writes the tag into the last 16 bytes.
    pub(crate) fn seal(&self, nonce: [u8; 12], buf: &mut [u8]) {
        let (pt, tag_out) = buf.split_at_mut(buf.len() - TAG_LEN);
        let tag = self
            .0
            .seal_in_place_separate_tag(r::Nonce::assume_unique_for_key(nonce), r::Aad::empty(), pt)
            .expect("AEAD seal cannot fail for chunk-sized inputs");
        tag_out.copy_from_slice(tag.as_ref());
    }

    /// Opens `buf` (ciphertext ‖ tag) in place.
    pub(crate) fn open(&self, nonce: [u8; 12], buf: &mut [u8]) -> Result<(), ()> {
        self.0
            .open_in_place(r::Nonce::assume_unique_for_key(nonce), r::Aad::empty(), buf)
            .map(|_| ())
            .map_err(|_| ())
    }

    pub(crate) fn seal_to(&self, nonce: [u8; 12], pt: &[u8], out: &mut [u8]) {
        out[..pt.len()].copy_from_slice(pt);
        self.seal(nonce, out);
    }

    pub(crate) fn open_to(&self, nonce: [u8; 12], input: &[u8], out: &mut [u8]) -> Result<(), ()> {
        let (ct, tag) = input.split_at(input.len() - TAG_LEN);
        out.copy_from_slice(ct);
        let tag: [u8; TAG_LEN] = tag.try_into().map_err(|_| ())?;
        self.0
            .open_in_place_separate_tag(
                r::Nonce::assume_unique_for_key(nonce),
                r::Aad::empty(),
                tag.into(),
                out,
                0..,
            )
            .map(|_| ())
            .map_err(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use aws_lc_rs::aead::{LessSafeKey, UnboundKey, AES_256_GCM};

    use super::super::{ChunkKey, PortableKey};
    use super::*;

    /// Every AES-256-GCM implementation a build can use: aws-lc, ring, RustCrypto.
    fn keys(k: &[u8; 32]) -> [ChunkKey; 3] {
        [
            ChunkKey::Aws(LessSafeKey::new(UnboundKey::new(&AES_256_GCM, k).unwrap())),
            ChunkKey::Ring(Box::new(RingKey::new(k))),
            ChunkKey::Portable(PortableKey::aes_256_gcm(k)),
        ]
    }

    /// All backends give the same bytes on every path, and each opens the others' output.
    #[test]
    fn backends_agree_on_random_inputs() {
        let mut seed = [0u8; 32];
        for len in [0usize, 1, 15, 16, 17, 255, 4096, 65_536, 65_537, 300_001] {
            crate::rng::fill(&mut seed).unwrap();
            let [aws, ring, rc] = keys(&seed);
            let mut pt = vec![0u8; len];
            crate::rng::fill(&mut pt).unwrap();
            let mut nonce = [0u8; 12];
            crate::rng::fill(&mut nonce).unwrap();
            let sealed_by = |k: &ChunkKey| {
                let mut out = vec![0u8; len + TAG_LEN];
                k.seal_to(nonce, &pt, &mut out);
                out
            };
            let (a, b, d) = (sealed_by(&aws), sealed_by(&ring), sealed_by(&rc));
            assert_eq!(a, b, "len {len}");
            assert_eq!(a, d, "len {len}");
            for k in [&ring, &rc] {
                let mut c = pt.clone();
                c.extend_from_slice(&[0; TAG_LEN]);
                k.seal(nonce, &mut c);
                assert_eq!(a, c);
            }
            for (opener, sealed) in [(&aws, &b), (&ring, &d), (&rc, &a)] {
                let mut out = vec![0u8; len];
                opener.open_to(nonce, sealed, &mut out).unwrap();
                assert_eq!(out, pt);
                let mut inplace = sealed.clone();
                opener.open(nonce, &mut inplace).unwrap();
                assert_eq!(inplace[..len], pt[..]);
                // any flipped bit fails, on both paths
                let mut bad = sealed.clone();
                let i = (len * 7 + 3) % bad.len();
                bad[i] ^= 0x10;
                assert!(opener.open_to(nonce, &bad, &mut out).is_err());
                assert!(opener.open(nonce, &mut bad).is_err());
            }
        }
    }

    /// Wycheproof AES-GCM, the groups this suite can express (256-bit key, 96-bit nonce,
    /// 128-bit tag, no associated data), through every backend.
    #[test]
    fn wycheproof_all_backends() {
        let path = format!("{}/../../vectors/wycheproof/aes_gcm_test.json", env!("CARGO_MANIFEST_DIR"));
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let h = |t: &serde_json::Value, k: &str| hex::decode(t[k].as_str().unwrap()).unwrap();
        let mut checked = 0;
        for g in json["testGroups"].as_array().unwrap() {
            if g["keySize"] != 256 || g["ivSize"] != 96 || g["tagSize"] != 128 {
                continue;
            }
            for t in g["tests"].as_array().unwrap() {
                if !h(t, "aad").is_empty() {
                    continue;
                }
                let key: [u8; 32] = h(t, "key").try_into().unwrap();
                let nonce: [u8; 12] = h(t, "iv").try_into().unwrap();
                let mut sealed = h(t, "ct");
                sealed.extend(h(t, "tag"));
                let valid = t["result"] != "invalid";
                for k in keys(&key) {
                    let mut out = vec![0u8; sealed.len() - TAG_LEN];
                    let r = k.open_to(nonce, &sealed, &mut out);
                    assert_eq!(r.is_ok(), valid, "tcId {}", t["tcId"]);
                    if valid {
                        assert_eq!(out, h(t, "msg"), "tcId {}", t["tcId"]);
                        let mut again = vec![0u8; sealed.len()];
                        k.seal_to(nonce, &out, &mut again);
                        assert_eq!(again, sealed, "tcId {}", t["tcId"]);
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 40, "only {checked} checks");
    }
}
