//! The ChaCha20 state and the `cipher` traits around it: key and nonce set-up, the block counter
//! (seek), and how many blocks remain before the 32-bit counter wraps. The block function is
//! `block.rs`; the four-block SIMD path over it, which hands out this core's keystream, is
//! `simd128.rs`.

use core::fmt;

use cipher::consts::{U12, U24, U32, U64};
use cipher::inout::InOutBuf;
use cipher::{
    BlockSizeUser, IvSizeUser, KeyIvInit, KeySizeUser, StreamCipherClosure, StreamCipherCore,
    StreamCipherSeekCore,
};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::block::State;
use crate::simd128::Backend;

/// "expand 32-byte k"
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

fn le_words<const N: usize>(bytes: &[u8]) -> [u32; N] {
    let mut out = [0u32; N];
    for (w, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    out
}

/// The ChaCha20 block function core (IETF: 96-bit nonce, 32-bit counter).
pub struct ChaCha20Core {
    state: State,
}

impl ChaCha20Core {
    fn from_key_nonce(key: &[u8; 32], nonce: &[u8; 12]) -> Self {
        let mut state = [0u32; 16];
        state[..4].copy_from_slice(&SIGMA);
        state[4..12].copy_from_slice(&le_words::<8>(key));
        state[13..].copy_from_slice(&le_words::<3>(nonce));
        ChaCha20Core { state }
    }
}

impl ChaCha20Core {
    /// XORs keystream from the current block on into `buf`, straight from its input to its
    /// output (the AEAD's path: no keystream buffer, see `simd128::apply`); a partial last block
    /// uses up its block.
    pub(crate) fn apply(&mut self, buf: InOutBuf<'_, '_, u8>) {
        crate::simd128::apply(&mut self.state, buf);
    }

    /// The next four keystream blocks (256 bytes) into `out`, in one SIMD pass; the counter
    /// moves past them. The caller wipes `out`.
    pub(crate) fn keystream_four(&mut self, out: &mut [u8; 256]) {
        crate::simd128::keystream_four(&self.state, out);
        self.state[12] = self.state[12].wrapping_add(4);
    }
}

impl KeySizeUser for ChaCha20Core {
    type KeySize = U32;
}

impl IvSizeUser for ChaCha20Core {
    type IvSize = U12;
}

impl BlockSizeUser for ChaCha20Core {
    type BlockSize = U64;
}

impl KeyIvInit for ChaCha20Core {
    fn new(key: &cipher::Key<Self>, iv: &cipher::Iv<Self>) -> Self {
        ChaCha20Core::from_key_nonce(&(*key).into(), &(*iv).into())
    }
}

impl StreamCipherCore for ChaCha20Core {
    /// As `chacha20` computes it for the IETF variant, so the wrapper accepts exactly the same
    /// lengths and seeks on both builds.
    fn remaining_blocks(&self) -> Option<usize> {
        (u32::MAX - self.state[12]).try_into().ok()
    }

    fn process_with_backend(&mut self, f: impl StreamCipherClosure<BlockSize = Self::BlockSize>) {
        f.call(&mut Backend::new(&mut self.state));
    }
}

impl StreamCipherSeekCore for ChaCha20Core {
    type Counter = u32;

    fn get_block_pos(&self) -> u32 {
        self.state[12]
    }

    fn set_block_pos(&mut self, pos: u32) {
        self.state[12] = pos;
    }
}

impl Drop for ChaCha20Core {
    fn drop(&mut self) {
        self.state.zeroize();
    }
}

impl ZeroizeOnDrop for ChaCha20Core {}

impl fmt::Debug for ChaCha20Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChaCha20Core { .. }")
    }
}

/// XChaCha20: the HChaCha20 subkey of the key and the nonce's first 16 bytes, then ChaCha20 under
/// it with the nonce `0000 ‖ nonce[16..24]` (draft-irtf-cfrg-xchacha §2.3), as `chacha20` does.
pub struct XChaCha20Core(ChaCha20Core);

impl XChaCha20Core {
    /// The ChaCha20 core under the HChaCha20 subkey, for the AEAD.
    pub(crate) fn into_inner(self) -> ChaCha20Core {
        self.0
    }
}

impl KeySizeUser for XChaCha20Core {
    type KeySize = U32;
}

impl IvSizeUser for XChaCha20Core {
    type IvSize = U24;
}

impl BlockSizeUser for XChaCha20Core {
    type BlockSize = U64;
}

impl KeyIvInit for XChaCha20Core {
    fn new(key: &cipher::Key<Self>, iv: &cipher::Iv<Self>) -> Self {
        let head: [u8; 16] = iv[..16].try_into().expect("24-byte nonce");
        let mut subkey: [u8; 32] = chacha20::hchacha::<chacha20::R20>(key, &head.into()).into();
        let mut nonce = [0u8; 12];
        nonce[4..].copy_from_slice(&iv[16..]);
        let core = ChaCha20Core::from_key_nonce(&subkey, &nonce);
        subkey.zeroize();
        XChaCha20Core(core)
    }
}

impl StreamCipherCore for XChaCha20Core {
    fn remaining_blocks(&self) -> Option<usize> {
        self.0.remaining_blocks()
    }

    fn process_with_backend(&mut self, f: impl StreamCipherClosure<BlockSize = Self::BlockSize>) {
        self.0.process_with_backend(f);
    }
}

impl StreamCipherSeekCore for XChaCha20Core {
    type Counter = u32;

    fn get_block_pos(&self) -> u32 {
        self.0.get_block_pos()
    }

    fn set_block_pos(&mut self, pos: u32) {
        self.0.set_block_pos(pos);
    }
}

impl ZeroizeOnDrop for XChaCha20Core {}

impl fmt::Debug for XChaCha20Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("XChaCha20Core { .. }")
    }
}
