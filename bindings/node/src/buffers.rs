//! Key generation and the one-shot buffer API, sync and async (the Node hybrid library's names).
//!
//! Async calls run on the libuv pool as `AsyncTask`s; inside one call the library spreads inputs
//! of 4 MiB and more over all cores, while smaller ones stay on the calling thread, so a thousand
//! small concurrent calls spawn no threads at all.

use hyperseal::recipient::{self, Kind};
use hyperseal::{Encryptor, Options};
use napi::bindgen_prelude::{AsyncTask, Buffer, BufferSlice, Either, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;

use crate::errors::{Code, Fail, JsErr};
use crate::keys::{self, KeyOptions, PublicKeys};
use crate::pool;

/// Options of {@link generateKeyPair}.
#[napi(object)]
pub struct KeyPairOptions {
    /// 'hybrid' (ML-KEM-768 + X25519, the default), 'x25519', 'mlkem1024', 'p256', 'p256-mlkem768',
    /// 'rsa3072', 'rsa4096'.
    pub kind: Option<String>,
}

/// A key pair as text, exactly as `hyperseal keygen` / `hyperseal pubkey` print it.
#[napi(object)]
pub struct KeyPair {
    /// The recipient: `age1pq1…`, `age1…`, or an SPKI PEM for RSA.
    pub public_key: String,
    /// The identity: an `AGE-SECRET-KEY-…` line, or a PKCS#8 PEM for RSA. Keep it secret.
    pub private_key: String,
}

/// Generates a key pair. Kinds that this build does not implement yet fail with
/// `ERR_HYPERSEAL_KEY` and a message containing "not implemented".
#[napi]
pub fn generate_key_pair(options: Option<KeyPairOptions>) -> Result<KeyPair, JsErr> {
    let name = options.and_then(|o| o.kind).unwrap_or_else(|| "hybrid".into());
    let kind = Kind::from_name(&name).ok_or_else(|| {
        Fail::arg(format!("unknown key kind {name:?}: use hybrid, x25519, mlkem1024, p256, p256-mlkem768, rsa3072 or rsa4096"))
    })?;
    let key = recipient::generate(kind).map_err(Fail::from)?;
    Ok(KeyPair { public_key: key.public.clone(), private_key: key.secret.to_string() })
}

/// The public key of a private key (what `hyperseal pubkey` prints).
#[napi]
pub fn public_key_of(private_key: String) -> Result<String, JsErr> {
    Ok(recipient::public_of(&private_key).map_err(Fail::from)?)
}

/// A result: the first `.1` bytes of the buffer (which may be a larger recycled one, see
/// `pool.rs`).
pub(crate) type Output = (Vec<u8>, usize);

/// The encryptor for `keys` and the length of the file it makes of `plaintext_len` bytes.
fn sealer(keys: &PublicKeys, allow_plugins: bool, plaintext_len: usize) -> Result<(Encryptor, usize), Fail> {
    let recipients = keys::recipients(keys, allow_plugins)?;
    let enc = Encryptor::with_recipients(&recipients, Options::default())?;
    let len = enc.encrypted_len(plaintext_len);
    Ok((enc, len))
}

fn check_not_empty(file: &[u8]) -> Result<(), Fail> {
    if file.is_empty() {
        return Err(Fail::new(Code(hyperseal::ErrorCode::Format), "unknown file format: the input is empty"));
    }
    Ok(())
}

/// Decrypts `file` into `out` (`file.len()` bytes suffice) and returns the plaintext length.
fn open_into(ids: &[Box<dyn hyperseal::Identity>], file: &[u8], out: &mut [u8]) -> Result<usize, Fail> {
    Ok(hyperseal::Decryptor::from_slice(file).and_then(|d| d.decrypt_into(ids, out))?)
}

/// One pass straight into a result buffer (the library's one-shot API, several cores from
/// 4 MiB on) in recycled memory, for the async calls: their results are released on the next
/// turn of the event loop, so the next large call finds its memory again.
pub(crate) fn seal(keys: &PublicKeys, allow_plugins: bool, plaintext: &[u8]) -> Result<Output, Fail> {
    let (enc, len) = sealer(keys, allow_plugins, plaintext.len())?;
    pooled(len, |out| enc.encrypt_into(plaintext, out).map(|()| len).map_err(Fail::from))
}

pub(crate) fn open(private_key: &str, allow_plugins: bool, file: &[u8]) -> Result<Output, Fail> {
    check_not_empty(file)?;
    let ids = keys::identities(private_key, allow_plugins)?;
    pooled(file.len(), |out| open_into(&ids, file, out))
}

pub(crate) fn pooled(
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<usize, Fail>,
) -> Result<Output, Fail> {
    pooled_in(pool::take(len), len, fill)
}

type SyncResult<'e> = Either<BufferSlice<'e>, Buffer>;

/// A result of the sync API, `len` bytes at most, filled by `fill` (which returns how many it
/// wrote). Small results are copied into the JS heap: a plain allocation there is cheaper than
/// an external buffer. Large ones go into recycled memory when an async result has left some,
/// else straight into a Buffer that Node allocates (`pool::node_buffer`).
///
/// Why not always recycled memory, as async does: a recycled buffer comes back only when its
/// finalizer runs, and Node runs those on a later turn of the event loop, which a loop of sync
/// calls never reaches. Each call then took fresh memory that the machine had never touched
/// (measured: 100 MiB in 290–360 ms, the kernel zeroing pages, against 13–20 ms recycled). A
/// Buffer Node allocates is freed by the garbage collector itself, with no finalizer, so its
/// memory is back before the next call needs it.
fn sync_output<'e>(
    env: &'e Env,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<usize, Fail>,
) -> Result<SyncResult<'e>, Fail> {
    if len < COPY_BELOW {
        let (v, n) = pooled(len, fill)?;
        let b = BufferSlice::copy_from(env, &v[..n])?;
        pool::give_back(v);
        return Ok(Either::A(b));
    }
    if let Some(v) = pool::take_kept(len) {
        let (v, n) = pooled_in(v, len, fill)?;
        return Ok(Either::B(pool::to_js_buffer(env, v, n)?));
    }
    Ok(Either::A(pool::node_buffer(env, len, fill)?))
}

fn pooled_in(
    mut out: Vec<u8>,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<usize, Fail>,
) -> Result<Output, Fail> {
    match fill(&mut out[..len]) {
        Ok(n) => Ok((out, n)),
        Err(e) => {
            // Unauthenticated bytes never leave: the buffer goes back unexposed.
            pool::give_back(out);
            Err(e)
        }
    }
}

pub(crate) fn bytes<'a>(data: &'a Either<&[u8], String>) -> &'a [u8] {
    match data {
        Either::A(b) => b,
        Either::B(s) => s.as_bytes(),
    }
}

/// Below this, results are copied into the JS heap: a plain allocation there is cheaper than an
/// external buffer (which needs a finalizer), and V8 accounts for it exactly. Above it, results
/// are handed over (or written where JS gets them) without a copy.
const COPY_BELOW: usize = 64 << 10;

pub(crate) fn to_js(env: &Env, v: Vec<u8>) -> Result<BufferSlice<'_>, Fail> {
    Ok(if v.len() < COPY_BELOW { BufferSlice::copy_from(env, &v)? } else { BufferSlice::from_data(env, v)? })
}

/// Encrypts `data` (a Buffer, Uint8Array or UTF-8 string) to one or more public keys.
/// Blocks the event loop: prefer {@link encryptByPublicKeyAsync} for large inputs.
#[napi(ts_return_type = "Buffer")]
pub fn encrypt_by_public_key<'e>(
    env: &'e Env,
    data: Either<&[u8], String>,
    public_key: Either<String, Vec<String>>,
    options: Option<KeyOptions>,
) -> Result<Either<BufferSlice<'e>, Buffer>, JsErr> {
    let plaintext = bytes(&data);
    let (enc, len) = sealer(&public_key, keys::allow_plugins(&options), plaintext.len())?;
    Ok(sync_output(env, len, |out| enc.encrypt_into(plaintext, out).map(|()| len).map_err(Fail::from))?)
}

/// Decrypts a buffer made by any hyperseal API or the CLI (binary or armored).
#[napi(ts_return_type = "Buffer")]
pub fn decrypt_by_private_key<'e>(
    env: &'e Env,
    data: Either<&[u8], String>,
    private_key: String,
    options: Option<KeyOptions>,
) -> Result<Either<BufferSlice<'e>, Buffer>, JsErr> {
    let file = bytes(&data);
    check_not_empty(file)?;
    let ids = keys::identities(&private_key, keys::allow_plugins(&options))?;
    Ok(sync_output(env, file.len(), |out| open_into(&ids, file, out))?)
}

/// Bytes borrowed from JS for the duration of an async call (the reference keeps them alive).
pub enum Data {
    Bytes(Uint8Array),
    Text(String),
}

impl Data {
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Data::Bytes(b) => b,
            Data::Text(s) => s.as_bytes(),
        }
    }
}

impl From<Either<Uint8Array, String>> for Data {
    fn from(e: Either<Uint8Array, String>) -> Self {
        match e {
            Either::A(b) => Data::Bytes(b),
            Either::B(s) => Data::Text(s),
        }
    }
}

/// The key, and whether it may name a plugin.
pub enum Job {
    Seal(PublicKeys, bool),
    Open(String, bool),
}

/// One async encrypt or decrypt on the libuv pool.
pub struct BufferTask {
    data: Data,
    job: Job,
}

impl Task for BufferTask {
    type Output = Result<Output, Fail>;
    type JsValue = Buffer;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(match &self.job {
            Job::Seal(keys, allow) => seal(keys, *allow, self.data.as_slice()),
            Job::Open(key, allow) => open(key, *allow, self.data.as_slice()),
        })
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Buffer> {
        match output {
            Ok((v, len)) => pool::to_js_buffer(&env, v, len),
            Err(f) => Err(f.into_rejection(&env)),
        }
    }
}

/// Encrypts on the libuv thread pool (all cores for large inputs); never blocks the event loop.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn encrypt_by_public_key_async(
    data: Either<Uint8Array, String>,
    public_key: Either<String, Vec<String>>,
    options: Option<KeyOptions>,
) -> AsyncTask<BufferTask> {
    AsyncTask::new(BufferTask {
        data: data.into(),
        job: Job::Seal(public_key, keys::allow_plugins(&options)),
    })
}

/// Decrypts on the libuv thread pool (all cores for large inputs); never blocks the event loop.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn decrypt_by_private_key_async(
    data: Either<Uint8Array, String>,
    private_key: String,
    options: Option<KeyOptions>,
) -> AsyncTask<BufferTask> {
    AsyncTask::new(BufferTask {
        data: data.into(),
        job: Job::Open(private_key, keys::allow_plugins(&options)),
    })
}
