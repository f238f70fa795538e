//! Stateful sealers behind `createEncryptStream` / `createDecryptStream` (the `Transform`s are
//! in `index.js`). Both hold at most a batch of chunks, so memory is flat whatever the size.
//!
//! The decrypting side is push-driven ("feed bytes, get the plaintext of the chunks that
//! authenticated"), built from the library's public pieces: `Header::read_from`,
//! `Header::payload_cipher` and the position-explicit `ChunkCipher`. A chunk is opened only when
//! more bytes follow it, because only then is it known not to be the last one.

use std::io::Write;
use std::sync::{Arc, Mutex};

use hyperseal::format::Header;
use hyperseal::stream::ChunkCipher;
use hyperseal::suite::TAG_LEN;
use hyperseal::{Encryptor, Options, StreamWriter, SALT_LEN};
use napi::bindgen_prelude::{BufferSlice, Either};
use napi::Env;
use napi_derive::napi;

use crate::errors::{Code, Fail, JsErr};
use crate::keys;

/// Where the encrypting writer puts sealed bytes until `push` hands them to JS.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Sink {
    /// Copies the ready bytes into a JS-heap Buffer and empties the sink, keeping its capacity:
    /// handing the `Vec` itself to JS would make every batch a fresh external allocation that V8
    /// frees late, and RSS would climb with the stream's length.
    fn drain_to_js<'e>(&self, env: &'e Env) -> Result<BufferSlice<'e>, Fail> {
        let mut v = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let out = BufferSlice::copy_from(env, &v[..])?;
        v.clear();
        Ok(out)
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Native half of `createEncryptStream`: plaintext in, file bytes out.
#[napi]
pub struct EncryptSession {
    writer: Option<StreamWriter<Sink>>,
    sink: Sink,
}

#[napi]
impl EncryptSession {
    /// Starts a file for the given public key(s); the header comes out of the first `push`.
    #[napi(constructor)]
    pub fn new(public_key: Either<String, Vec<String>>) -> Result<Self, JsErr> {
        let recipients = keys::recipients(&public_key)?;
        let sink = Sink::default();
        let writer = Encryptor::with_recipients(&recipients, Options::default())
            .and_then(|e| e.wrap_output(sink.clone()))
            .map_err(Fail::from)?;
        Ok(EncryptSession { writer: Some(writer), sink })
    }

    /// Encrypts `data`; returns the file bytes that are ready (often none: chunks are sealed a
    /// batch at a time, and the last chunk only at `final`).
    #[napi]
    pub fn push<'e>(&mut self, env: &'e Env, data: &[u8]) -> Result<BufferSlice<'e>, JsErr> {
        let w = self.writer.as_mut().ok_or_else(|| Fail::arg("the stream is already finished"))?;
        w.write_all(data).map_err(Fail::from)?;
        Ok(self.sink.drain_to_js(env)?)
    }

    /// Seals the final chunk; returns the remaining file bytes.
    #[napi(js_name = "final")]
    pub fn finish<'e>(&mut self, env: &'e Env) -> Result<BufferSlice<'e>, JsErr> {
        let w = self.writer.take().ok_or_else(|| Fail::arg("the stream is already finished"))?;
        w.finish().map_err(Fail::from)?;
        Ok(self.sink.drain_to_js(env)?)
    }
}

/// Header lines are short; a "header" this long without its MAC line is not one.
const MAX_HEADER: usize = 1 << 20;

enum State {
    /// Collecting the header and the salt.
    Header,
    Payload {
        cipher: ChunkCipher,
        index: u64,
    },
    Done,
}

/// Native half of `createDecryptStream`: file bytes in, authenticated plaintext out.
#[napi]
pub struct DecryptSession {
    identities: Arc<Vec<Box<dyn hyperseal::Identity>>>,
    pending: Vec<u8>,
    /// Plaintext of one `push`, reused (see `Sink::drain_to_js` for why it is copied out).
    out: Vec<u8>,
    state: State,
}

#[napi]
impl DecryptSession {
    /// Prepares to decrypt with the given private key.
    #[napi(constructor)]
    pub fn new(private_key: String) -> Result<Self, JsErr> {
        Ok(DecryptSession {
            identities: keys::identities(&private_key)?,
            pending: Vec::new(),
            out: Vec::new(),
            state: State::Header,
        })
    }

    /// Feeds file bytes; returns the plaintext of every chunk that is now known not to be the
    /// last and authenticated. Errors are sticky.
    #[napi]
    pub fn push<'e>(&mut self, env: &'e Env, data: &[u8]) -> Result<BufferSlice<'e>, JsErr> {
        self.pending.extend_from_slice(data);
        self.run(env, false)
    }

    /// Ends the input: opens the final chunk and returns its plaintext, or fails if the file
    /// was cut short.
    #[napi(js_name = "final")]
    pub fn finish<'e>(&mut self, env: &'e Env) -> Result<BufferSlice<'e>, JsErr> {
        self.run(env, true)
    }

    fn run<'e>(&mut self, env: &'e Env, end: bool) -> Result<BufferSlice<'e>, JsErr> {
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let r = self.step(end, &mut out).and_then(|()| Ok(BufferSlice::copy_from(env, &out[..])?));
        self.out = out;
        r.map_err(|f| self.fail(f))
    }

    fn fail(&mut self, f: Fail) -> JsErr {
        self.state = State::Done;
        self.pending = Vec::new();
        f.into()
    }

    fn step(&mut self, end: bool, out: &mut Vec<u8>) -> Result<(), Fail> {
        if let State::Header = self.state {
            if !self.read_header(end)? {
                return Ok(());
            }
        }
        let State::Payload { cipher, index } = &mut self.state else {
            return Err(Fail::arg("the stream is already finished or failed"));
        };
        let full = cipher.chunk_size() + TAG_LEN;
        let mut at = 0;
        // `>` rather than `>=`: a full chunk at the very end may be the last one.
        while self.pending.len() - at > full {
            let n = cipher.open(*index, false, &mut self.pending[at..at + full])?;
            out.extend_from_slice(&self.pending[at..at + n]);
            at += full;
            *index += 1;
        }
        self.pending.drain(..at);
        if end {
            let buf = &mut self.pending[..];
            let copy = (buf.len() == full).then(|| buf.to_vec());
            match cipher.open(*index, true, buf) {
                Ok(n) => out.extend_from_slice(&buf[..n]),
                // A full chunk that opens as non-final: the file was cut at a chunk boundary.
                Err(_) if copy.is_some_and(|mut c| cipher.open(*index, false, &mut c).is_ok()) => {
                    return Err(hyperseal::Error::Truncated(*index).into())
                }
                Err(_) if buf.len() < TAG_LEN => return Err(hyperseal::Error::Truncated(*index).into()),
                Err(e) => return Err(e.into()),
            }
            self.state = State::Done;
            self.pending = Vec::new();
        }
        Ok(())
    }

    /// Parses the header and salt once they are all here; `Ok(false)` means "need more".
    fn read_header(&mut self, end: bool) -> Result<bool, Fail> {
        let buf = &self.pending[..];
        if buf.starts_with(b"-----BEGIN") {
            return Err(Fail::new(
                Code::Format,
                "armored input is not supported by createDecryptStream: use decryptFile or decryptByPrivateKey",
            ));
        }
        // Parse as soon as the MAC line ("---" starts no other header line) and the salt are in,
        // or right away when the start already cannot be a header, to fail early.
        let mac_line = buf.windows(4).position(|w| w == b"\n---");
        let complete =
            mac_line.and_then(|p| buf[p + 1..].iter().position(|&b| b == b'\n').map(|q| p + 2 + q));
        let plausible = [&b"hyperseal/v1\n"[..], b"age-encryption.org/v1\n"]
            .iter()
            .any(|v| v.starts_with(&buf[..buf.len().min(v.len())]) || buf.starts_with(v));
        match complete {
            Some(end_of_header) if buf.len() >= end_of_header + SALT_LEN => {}
            Some(_) if !end => return Ok(false),
            None if plausible && !end && buf.len() < MAX_HEADER => return Ok(false),
            _ if buf.is_empty() => {
                return Err(Fail::new(Code::Format, "unknown file format: the input is empty"))
            }
            _ => {}
        }
        let mut rest = buf;
        let header = Header::read_from(&mut rest)?;
        let consumed = buf.len() - rest.len();
        if rest.len() < SALT_LEN {
            return Err(hyperseal::Error::MalformedHeader(
                "file ends before the 16-byte payload nonce".into(),
            )
            .into());
        }
        let cipher = header.payload_cipher(&self.identities, &rest[..SALT_LEN])?;
        self.pending.drain(..consumed + SALT_LEN);
        self.state = State::Payload { cipher, index: 0 };
        Ok(true)
    }
}
