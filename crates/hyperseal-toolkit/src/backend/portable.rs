//! RustCrypto behind the aws-lc-rs names the toolkit uses (see `mod.rs`), for wasm32. Each
//! item keeps aws-lc-rs's signature and meaning; nothing here is a hand-written primitive.

/// `aws_lc_rs::error`.
pub(crate) mod error {
    /// An opaque failure (wrong tag, bad length, RNG failure).
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Unspecified;

    /// A key of the wrong length for its algorithm.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct KeyRejected;

    impl From<KeyRejected> for Unspecified {
        fn from(_: KeyRejected) -> Self {
            Unspecified
        }
    }
}

/// `aws_lc_rs::rand`: the platform RNG (`crypto.getRandomValues` in browsers and Node).
pub(crate) mod rand {
    use super::error::Unspecified;

    pub(crate) trait SecureRandom {
        fn fill(&self, dest: &mut [u8]) -> Result<(), Unspecified>;
    }

    pub(crate) struct SystemRandom;

    impl SystemRandom {
        pub(crate) fn new() -> Self {
            SystemRandom
        }
    }

    impl SecureRandom for SystemRandom {
        /// The library's source (on WebAssembly a pool of `getRandomValues` draws: see
        /// `hyperseal::fill_random`), so the toolkit's nonces cost what the library's do.
        fn fill(&self, dest: &mut [u8]) -> Result<(), Unspecified> {
            hyperseal::fill_random(dest).map_err(|_| Unspecified)
        }
    }
}

/// `aws_lc_rs::digest`: SHA-2, SHA-3 and legacy SHA-1.
pub(crate) mod digest {
    use sha2::Digest as _;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Id {
        Sha1,
        Sha256,
        Sha384,
        Sha512,
        Sha3_256,
        Sha3_512,
    }

    #[derive(Debug, PartialEq, Eq)]
    pub(crate) struct Algorithm(pub(crate) Id);

    pub(crate) static SHA256: Algorithm = Algorithm(Id::Sha256);
    pub(crate) static SHA384: Algorithm = Algorithm(Id::Sha384);
    pub(crate) static SHA512: Algorithm = Algorithm(Id::Sha512);
    pub(crate) static SHA3_256: Algorithm = Algorithm(Id::Sha3_256);
    pub(crate) static SHA3_512: Algorithm = Algorithm(Id::Sha3_512);
    pub(crate) static SHA1_FOR_LEGACY_USE_ONLY: Algorithm = Algorithm(Id::Sha1);

    #[derive(Clone)]
    enum State {
        Sha1(sha1::Sha1),
        Sha256(sha2::Sha256),
        Sha384(sha2::Sha384),
        Sha512(sha2::Sha512),
        Sha3_256(sha3::Sha3_256),
        Sha3_512(sha3::Sha3_512),
    }

    /// A running digest (boxed: SHA-3 states are ~200 bytes, and `hash::Hasher` keeps one inline).
    #[derive(Clone)]
    pub(crate) struct Context(Box<State>);

    /// A finished digest.
    pub(crate) struct Digest(Vec<u8>);

    impl AsRef<[u8]> for Digest {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }

    impl Context {
        pub(crate) fn new(algorithm: &'static Algorithm) -> Self {
            Context(Box::new(match algorithm.0 {
                Id::Sha1 => State::Sha1(Default::default()),
                Id::Sha256 => State::Sha256(Default::default()),
                Id::Sha384 => State::Sha384(Default::default()),
                Id::Sha512 => State::Sha512(Default::default()),
                Id::Sha3_256 => State::Sha3_256(Default::default()),
                Id::Sha3_512 => State::Sha3_512(Default::default()),
            }))
        }

        pub(crate) fn update(&mut self, data: &[u8]) {
            match &mut *self.0 {
                State::Sha1(h) => h.update(data),
                State::Sha256(h) => h.update(data),
                State::Sha384(h) => h.update(data),
                State::Sha512(h) => h.update(data),
                State::Sha3_256(h) => h.update(data),
                State::Sha3_512(h) => h.update(data),
            }
        }

        pub(crate) fn finish(self) -> Digest {
            Digest(match *self.0 {
                State::Sha1(h) => h.finalize().to_vec(),
                State::Sha256(h) => h.finalize().to_vec(),
                State::Sha384(h) => h.finalize().to_vec(),
                State::Sha512(h) => h.finalize().to_vec(),
                State::Sha3_256(h) => h.finalize().to_vec(),
                State::Sha3_512(h) => h.finalize().to_vec(),
            })
        }
    }

    pub(crate) fn digest(algorithm: &'static Algorithm, data: &[u8]) -> Digest {
        let mut c = Context::new(algorithm);
        c.update(data);
        c.finish()
    }
}

/// `aws_lc_rs::hmac` over SHA-2 and legacy SHA-1.
pub(crate) mod hmac {
    use hmac::{Hmac, KeyInit, Mac};

    use super::digest::Id;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct Algorithm(Id);

    pub(crate) const HMAC_SHA256: Algorithm = Algorithm(Id::Sha256);
    pub(crate) const HMAC_SHA384: Algorithm = Algorithm(Id::Sha384);
    pub(crate) const HMAC_SHA512: Algorithm = Algorithm(Id::Sha512);
    pub(crate) const HMAC_SHA1_FOR_LEGACY_USE_ONLY: Algorithm = Algorithm(Id::Sha1);

    #[derive(Clone)]
    enum State {
        Sha1(Hmac<sha1::Sha1>),
        Sha256(Hmac<sha2::Sha256>),
        Sha384(Hmac<sha2::Sha384>),
        Sha512(Hmac<sha2::Sha512>),
    }

    /// A keyed HMAC (the key is absorbed into the hash states).
    pub(crate) struct Key(State);

    /// A running HMAC.
    pub(crate) struct Context(State);

    /// A finished tag.
    pub(crate) struct Tag(Vec<u8>);

    impl AsRef<[u8]> for Tag {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }

    fn keyed<M: KeyInit>(key: &[u8]) -> M {
        // HMAC accepts keys of any length.
        M::new_from_slice(key).expect("HMAC takes any key length")
    }

    impl Key {
        pub(crate) fn new(algorithm: Algorithm, key: &[u8]) -> Self {
            Key(match algorithm.0 {
                Id::Sha1 => State::Sha1(keyed(key)),
                Id::Sha256 => State::Sha256(keyed(key)),
                Id::Sha384 => State::Sha384(keyed(key)),
                Id::Sha512 => State::Sha512(keyed(key)),
                Id::Sha3_256 | Id::Sha3_512 => unreachable!("no HMAC-SHA-3 constant is defined"),
            })
        }
    }

    impl Context {
        pub(crate) fn with_key(key: &Key) -> Self {
            Context(key.0.clone())
        }

        pub(crate) fn update(&mut self, data: &[u8]) {
            match &mut self.0 {
                State::Sha1(m) => m.update(data),
                State::Sha256(m) => m.update(data),
                State::Sha384(m) => m.update(data),
                State::Sha512(m) => m.update(data),
            }
        }

        pub(crate) fn sign(self) -> Tag {
            Tag(match self.0 {
                State::Sha1(m) => m.finalize().into_bytes().to_vec(),
                State::Sha256(m) => m.finalize().into_bytes().to_vec(),
                State::Sha384(m) => m.finalize().into_bytes().to_vec(),
                State::Sha512(m) => m.finalize().into_bytes().to_vec(),
            })
        }
    }
}

/// `aws_lc_rs::hkdf`: extract with a salt, expand with info parts into a caller's buffer.
pub(crate) mod hkdf {
    use super::error::Unspecified;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct Algorithm(bool);

    pub(crate) const HKDF_SHA256: Algorithm = Algorithm(false);
    pub(crate) const HKDF_SHA512: Algorithm = Algorithm(true);

    /// The output length of an expansion.
    pub(crate) trait KeyType {
        fn len(&self) -> usize;
    }

    pub(crate) struct Salt {
        algorithm: Algorithm,
        salt: Vec<u8>,
    }

    enum PrkState {
        Sha256(::hkdf::Hkdf<sha2::Sha256>),
        Sha512(::hkdf::Hkdf<sha2::Sha512>),
    }

    pub(crate) struct Prk(PrkState);

    pub(crate) struct Okm<'a, L: KeyType> {
        prk: &'a Prk,
        info: &'a [&'a [u8]],
        len: L,
    }

    impl Salt {
        pub(crate) fn new(algorithm: Algorithm, salt: &[u8]) -> Self {
            Salt { algorithm, salt: salt.to_vec() }
        }

        /// An empty salt is HMAC's all-zero key, as RFC 5869 says for "not provided".
        pub(crate) fn extract(&self, ikm: &[u8]) -> Prk {
            Prk(match self.algorithm.0 {
                false => PrkState::Sha256(::hkdf::Hkdf::new(Some(&self.salt), ikm)),
                true => PrkState::Sha512(::hkdf::Hkdf::new(Some(&self.salt), ikm)),
            })
        }
    }

    impl Prk {
        pub(crate) fn expand<'a, L: KeyType>(
            &'a self,
            info: &'a [&'a [u8]],
            len: L,
        ) -> Result<Okm<'a, L>, Unspecified> {
            let max = 255 * if matches!(self.0, PrkState::Sha256(_)) { 32 } else { 64 };
            if len.len() > max {
                return Err(Unspecified);
            }
            Ok(Okm { prk: self, info, len })
        }
    }

    impl<L: KeyType> Okm<'_, L> {
        pub(crate) fn fill(self, out: &mut [u8]) -> Result<(), Unspecified> {
            if out.len() != self.len.len() {
                return Err(Unspecified);
            }
            match &self.prk.0 {
                PrkState::Sha256(h) => h.expand_multi_info(self.info, out),
                PrkState::Sha512(h) => h.expand_multi_info(self.info, out),
            }
            .map_err(|_| Unspecified)
        }
    }
}

/// `aws_lc_rs::pbkdf2` with HMAC-SHA-256/512.
pub(crate) mod pbkdf2 {
    use std::num::NonZeroU32;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct Algorithm(bool);

    pub(crate) static PBKDF2_HMAC_SHA256: Algorithm = Algorithm(false);
    pub(crate) static PBKDF2_HMAC_SHA512: Algorithm = Algorithm(true);

    pub(crate) fn derive(
        algorithm: Algorithm,
        iterations: NonZeroU32,
        salt: &[u8],
        secret: &[u8],
        out: &mut [u8],
    ) {
        match algorithm.0 {
            false => ::pbkdf2::pbkdf2_hmac::<sha2::Sha256>(secret, salt, iterations.get(), out),
            true => ::pbkdf2::pbkdf2_hmac::<sha2::Sha512>(secret, salt, iterations.get(), out),
        }
    }
}

/// `aws_lc_rs::aead`: AES-128/256-GCM, ChaCha20-Poly1305 and AES-256-GCM-SIV, 12-byte nonces,
/// 16-byte tags, sealed in place with the tag apart.
pub(crate) mod aead {
    use aes_gcm::aead::{AeadInOut, KeyInit};

    use super::error::{KeyRejected, Unspecified};

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Id {
        Aes128Gcm,
        Aes256Gcm,
        ChaCha20Poly1305,
        Aes256GcmSiv,
    }

    #[derive(Debug, PartialEq, Eq)]
    pub(crate) struct Algorithm(Id);

    pub(crate) static AES_128_GCM: Algorithm = Algorithm(Id::Aes128Gcm);
    pub(crate) static AES_256_GCM: Algorithm = Algorithm(Id::Aes256Gcm);
    pub(crate) static CHACHA20_POLY1305: Algorithm = Algorithm(Id::ChaCha20Poly1305);
    pub(crate) static AES_256_GCM_SIV: Algorithm = Algorithm(Id::Aes256GcmSiv);

    enum Cipher {
        Aes128Gcm(Box<aes_gcm::Aes128Gcm>),
        Aes256Gcm(Box<aes_gcm::Aes256Gcm>),
        // simd128 ChaCha20 on wasm32 (crates/chacha20-simd128); RustCrypto's `chacha20` elsewhere.
        ChaCha(Box<chacha20_simd128::ChaCha20Poly1305>),
        Siv(Box<aes_gcm_siv::Aes256GcmSiv>),
    }

    pub(crate) struct UnboundKey(Cipher);
    pub(crate) struct LessSafeKey(Cipher);
    pub(crate) struct Nonce([u8; 12]);
    pub(crate) struct Aad<A>(A);
    pub(crate) struct Tag([u8; 16]);

    impl AsRef<[u8]> for Tag {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }

    impl<A: AsRef<[u8]>> From<A> for Aad<A> {
        fn from(a: A) -> Self {
            Aad(a)
        }
    }

    impl Nonce {
        pub(crate) fn try_assume_unique_for_key(nonce: &[u8]) -> Result<Nonce, Unspecified> {
            Ok(Nonce(nonce.try_into().map_err(|_| Unspecified)?))
        }

        pub(crate) fn assume_unique_for_key(nonce: [u8; 12]) -> Nonce {
            Nonce(nonce)
        }
    }

    fn key<K: KeyInit>(bytes: &[u8]) -> Result<Box<K>, KeyRejected> {
        K::new_from_slice(bytes).map(Box::new).map_err(|_| KeyRejected)
    }

    impl UnboundKey {
        pub(crate) fn new(algorithm: &'static Algorithm, bytes: &[u8]) -> Result<Self, KeyRejected> {
            Ok(UnboundKey(match algorithm.0 {
                Id::Aes128Gcm => Cipher::Aes128Gcm(key(bytes)?),
                Id::Aes256Gcm => Cipher::Aes256Gcm(key(bytes)?),
                Id::ChaCha20Poly1305 => Cipher::ChaCha(key(bytes)?),
                Id::Aes256GcmSiv => Cipher::Siv(key(bytes)?),
            }))
        }
    }

    impl LessSafeKey {
        pub(crate) fn new(key: UnboundKey) -> Self {
            LessSafeKey(key.0)
        }

        pub(crate) fn seal_in_place_separate_tag<A: AsRef<[u8]>>(
            &self,
            nonce: Nonce,
            aad: Aad<A>,
            buf: &mut [u8],
        ) -> Result<Tag, Unspecified> {
            let (n, aad) = (&nonce.0.into(), aad.0);
            let tag = match &self.0 {
                Cipher::Aes128Gcm(k) => k.encrypt_inout_detached(n, aad.as_ref(), buf.into()),
                Cipher::Aes256Gcm(k) => k.encrypt_inout_detached(n, aad.as_ref(), buf.into()),
                Cipher::ChaCha(k) => k.encrypt_inout_detached(n, aad.as_ref(), buf.into()),
                Cipher::Siv(k) => k.encrypt_inout_detached(n, aad.as_ref(), buf.into()),
            }
            .map_err(|_| Unspecified)?;
            Ok(Tag(tag.into()))
        }

        /// aws-lc's scatter seal: `in_out` sealed in place, then `extra_in` encrypted into
        /// `extra_out_and_tag` followed by the tag. Here one buffer: copy, then seal in place.
        pub(crate) fn seal_in_place_scatter<A: AsRef<[u8]>>(
            &self,
            nonce: Nonce,
            aad: Aad<A>,
            in_out: &mut [u8],
            extra_in: &[u8],
            extra_out_and_tag: &mut [u8],
        ) -> Result<(), Unspecified> {
            if !in_out.is_empty() || extra_out_and_tag.len() != extra_in.len() + 16 {
                return Err(Unspecified); // only the form aead.rs uses
            }
            let (body, tag_out) = extra_out_and_tag.split_at_mut(extra_in.len());
            body.copy_from_slice(extra_in);
            let tag = self.seal_in_place_separate_tag(nonce, aad, body)?;
            tag_out.copy_from_slice(tag.as_ref());
            Ok(())
        }

        /// aws-lc's gather open: `in_ciphertext` opened into `out_plaintext`. Here: copy, then
        /// open in place (on failure the caller wipes `out_plaintext`, as aead.rs does).
        pub(crate) fn open_separate_gather<A: AsRef<[u8]>>(
            &self,
            nonce: Nonce,
            aad: Aad<A>,
            in_ciphertext: &[u8],
            in_tag: &[u8],
            out_plaintext: &mut [u8],
        ) -> Result<(), Unspecified> {
            if in_ciphertext.len() != out_plaintext.len() {
                return Err(Unspecified);
            }
            out_plaintext.copy_from_slice(in_ciphertext);
            self.open_in_place_separate_tag(nonce, aad, in_tag, out_plaintext)
        }

        /// On failure `buf` may hold unauthenticated bytes: the caller wipes it (aead.rs does).
        pub(crate) fn open_in_place_separate_tag<A: AsRef<[u8]>>(
            &self,
            nonce: Nonce,
            aad: Aad<A>,
            tag: &[u8],
            buf: &mut [u8],
        ) -> Result<(), Unspecified> {
            let tag: [u8; 16] = tag.try_into().map_err(|_| Unspecified)?;
            let (n, aad, t) = (&nonce.0.into(), aad.0, &tag.into());
            match &self.0 {
                Cipher::Aes128Gcm(k) => k.decrypt_inout_detached(n, aad.as_ref(), buf.into(), t),
                Cipher::Aes256Gcm(k) => k.decrypt_inout_detached(n, aad.as_ref(), buf.into(), t),
                Cipher::ChaCha(k) => k.decrypt_inout_detached(n, aad.as_ref(), buf.into(), t),
                Cipher::Siv(k) => k.decrypt_inout_detached(n, aad.as_ref(), buf.into(), t),
            }
            .map_err(|_| Unspecified)
        }
    }
}
