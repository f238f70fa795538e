//! Known-answer tests: RFC 8439 (§2.3.2 block, §2.4.2 encryption, §2.8.2 AEAD, Appendix A.1
//! keystreams and A.2 encryptions at block counters 0, 1, 2 and 42) and
//! draft-irtf-cfrg-xchacha (A.2 keystream, A.1 AEAD).

use chacha20_simd128::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use chacha20_simd128::{ChaCha20, ChaCha20Poly1305, XChaCha20, XChaCha20Poly1305};
use chacha20poly1305::aead::{AeadInOut, KeyInit};

use crate::{check, unhex};

const KEY_SEQ: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const KEY_0: &str = "0000000000000000000000000000000000000000000000000000000000000000";
const KEY_1: &str = "0000000000000000000000000000000000000000000000000000000000000001";
const KEY_FF: &str = "00ff000000000000000000000000000000000000000000000000000000000000";
const NONCE_0: &str = "000000000000000000000000";
const NONCE_2: &str = "000000000000000000000002";

const LADIES: &str = "4c616469657320616e642047656e746c656d656e206f662074686520636c617373206f66202739393a204966204920636f756c64206f6666657220796f75206f6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73637265656e20776f756c642062652069742e";

/// (what, key, nonce, block counter, plaintext, expected output): ChaCha20 from `counter`.
const STREAM: &[(&str, &str, &str, u32, &str, &str)] = &[
    (
        "§2.3.2 block",
        KEY_SEQ,
        "000000090000004a00000000",
        1,
        "",
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4ed2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e",
    ),
    (
        "§2.4.2 encryption",
        KEY_SEQ,
        "000000000000004a00000000",
        1,
        LADIES,
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d",
    ),
    (
        "A.1 #1 (counter 0)",
        KEY_0,
        NONCE_0,
        0,
        "",
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586",
    ),
    (
        "A.1 #2 (counter 1)",
        KEY_0,
        NONCE_0,
        1,
        "",
        "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f",
    ),
    (
        "A.1 #3 (key 1, counter 1)",
        KEY_1,
        NONCE_0,
        1,
        "",
        "3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0",
    ),
    (
        "A.1 #4 (counter 2)",
        KEY_FF,
        NONCE_0,
        2,
        "",
        "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096",
    ),
    (
        "A.1 #5 (nonce 2, counter 0)",
        KEY_0,
        NONCE_2,
        0,
        "",
        "c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c78a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d",
    ),
    (
        "A.2 #3 (counter 42)",
        "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
        NONCE_2,
        42,
        "2754776173206272696c6c69672c20616e642074686520736c6974687920746f7665730a446964206779726520616e642067696d626c6520696e2074686520776162653a0a416c6c206d696d737920776572652074686520626f726f676f7665732c0a416e6420746865206d6f6d65207261746873206f757467726162652e",
        "62e6347f95ed87a45ffae7426f27a1df5fb69110044c0d73118effa95b01e5cf166d3df2d721caf9b21e5fb14c616871fd84c54f9d65b283196c7fe4f60553ebf39c6402c42234e32a356b3e764312a61a5532055716ead6962568f87d3f3f7704c6a8d1bcd1bf4d50d6154b6da731b187b58dfd728afa36757a797ac188d1",
    ),
];

/// draft-irtf-cfrg-xchacha A.2: the keystream after the first block (counter 1 on).
const XKEY: &str = "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f";
const XNONCE: &str = "404142434445464748494a4b4c4d4e4f5051525354555658";
const XKEYSTREAM: &str = "29624b4b1b140ace53740e405b2168540fd7d630c1f536fecd722fc3cddba7f4cca98cf9e47e5e64d115450f9b125b54449ff76141ca620a1f9cfcab2a1a8a255e766a5266b878846120ea64ad99aa479471e63befcbd37cd1c22a221fe462215cf32c74895bf505863ccddd48f62916dc6521f1ec50a5ae08903aa259d9bf607cd8026fba548604f1b6072d91bc91243a5b845f7fd171b02edc5a0a84cf28dd241146bc376e3f48df5e7fee1d11048c190a3d3deb0feb64b42d9c6fdeee290fa0e6ae2c26c0249ea8c181f7e2ffd100cbe5fd3c4f8271d62b15330cb8fdcf00b3df507ca8c924f7017b7e712d15a2eb5c50484451e54e1b4b995bd8fdd94597bb94d7af0b2c04df10ba0890899ed9293a0f55b8bafa999264035f1d4fbe7fe0aafa109a62372027e50e10cdfecca127";

/// (what, nonce, ciphertext ‖ tag) for the AEAD with key 80..9f, AAD 50515253c0c1c2c3c4c5c6c7,
/// plaintext "Ladies and Gentlemen…".
const AEAD_KEY: &str = XKEY;
const AEAD_AAD: &str = "50515253c0c1c2c3c4c5c6c7";
const AEAD_12: (&str, &str) = ("070000004041424344454647", "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b61161ae10b594f09e26a7e902ecbd0600691");
const AEAD_24: (&str, &str) = ("404142434445464748494a4b4c4d4e4f5051525354555657", "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52ec0875924c1c7987947deafd8780acf49");

/// Runs every vector; the number checked, or the first failure.
pub fn run() -> Result<usize, String> {
    let mut n = 0;
    for &(what, key, nonce, counter, pt, want) in STREAM {
        let want = unhex(want);
        // An empty plaintext stands for zeros: the keystream itself.
        let mut buf = if pt.is_empty() { vec![0u8; want.len()] } else { unhex(pt) };
        let key: [u8; 32] = unhex(key).try_into().expect("32-byte key");
        let nonce: [u8; 12] = unhex(nonce).try_into().expect("12-byte nonce");
        let mut c = ChaCha20::new(&key.into(), &nonce.into());
        c.seek(u64::from(counter) * 64);
        c.apply_keystream(&mut buf);
        check(buf == want, what)?;
        // The same bytes one at a time: the buffered path across block boundaries.
        let mut c = ChaCha20::new(&key.into(), &nonce.into());
        c.seek(u64::from(counter) * 64);
        let mut bytes = if pt.is_empty() { vec![0u8; want.len()] } else { unhex(pt) };
        for b in bytes.chunks_mut(1) {
            c.apply_keystream(b);
        }
        check(bytes == want, what)?;
        // Short vectors go through the single-block path; in a call of four blocks or more the
        // vector's block lands in SIMD lane `lane` (counters allowing), so every lane is checked.
        let pt = if pt.is_empty() { vec![0u8; want.len()] } else { unhex(pt) };
        for lane in 0..4u32.min(counter + 1) {
            let skip = lane as usize * 64;
            let mut ks = vec![0u8; (skip + want.len()).max(256)];
            let mut c = ChaCha20::new(&key.into(), &nonce.into());
            c.seek(u64::from(counter - lane) * 64);
            c.apply_keystream(&mut ks);
            let out: Vec<u8> = ks[skip..skip + want.len()].iter().zip(&pt).map(|(k, p)| k ^ p).collect();
            check(out == want, &format!("{what} in lane {lane}"))?;
        }
        n += 1;
    }

    let key: [u8; 32] = unhex(XKEY).try_into().expect("32-byte key");
    let nonce: [u8; 24] = unhex(XNONCE).try_into().expect("24-byte nonce");
    let want = unhex(XKEYSTREAM);
    let mut c = XChaCha20::new(&key.into(), &nonce.into());
    c.seek(64u64);
    let mut buf = vec![0u8; want.len()];
    c.apply_keystream(&mut buf);
    check(buf == want, "xchacha A.2 keystream")?;
    n += 1;

    let key: [u8; 32] = unhex(AEAD_KEY).try_into().expect("32-byte key");
    let (aad, pt) = (unhex(AEAD_AAD), unhex(LADIES));
    for (what, (nonce, want)) in [("§2.8.2 AEAD", AEAD_12), ("xchacha A.1 AEAD", AEAD_24)] {
        let (nonce, want) = (unhex(nonce), unhex(want));
        let mut buf = pt.clone();
        let tag = if nonce.len() == 12 {
            let n: [u8; 12] = nonce[..].try_into().expect("12");
            ChaCha20Poly1305::new(&key.into()).encrypt_inout_detached(&n.into(), &aad, (&mut buf[..]).into())
        } else {
            let n: [u8; 24] = nonce[..].try_into().expect("24");
            XChaCha20Poly1305::new(&key.into()).encrypt_inout_detached(&n.into(), &aad, (&mut buf[..]).into())
        }
        .map_err(|_| format!("{what}: seal failed"))?;
        buf.extend_from_slice(&tag);
        check(buf == want, what)?;
        n += 1;
    }
    Ok(n)
}
