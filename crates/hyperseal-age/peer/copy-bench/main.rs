//! Encrypts and decrypts SIZE bytes through age's `Encryptor`/`Decryptor` with `io::copy`
//! (8 KiB reads and writes), as programs use them, and prints the seconds each took:
//! `{"encrypt_s": …, "decrypt_s": …}`. Built against the real age crate and against
//! hyperseal-age from this one source.
//!
//! The library alone is timed: the plaintext comes from memory and goes to `io::sink`, the
//! file is decrypted from memory (a disk's speed would otherwise decide).
//!
//! Usage: PROGRAM SIZE

use std::io::{self, Read, Write};
use std::time::Instant;

/// SIZE bytes of one pseudo-random MiB, repeated: nothing here compresses, so repetition
/// flatters no one.
struct Data {
    block: Vec<u8>,
    left: u64,
    at: usize,
}

impl Read for Data {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.left).min((self.block.len() - self.at) as u64) as usize;
        buf[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at = (self.at + n) % self.block.len();
        self.left -= n as u64;
        Ok(n)
    }
}

fn data(size: u64) -> Data {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let block = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    Data { block, left: size, at: 0 }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, size] = &args[..] else { return Err("usage: PROGRAM SIZE".into()) };
    let size: u64 = size.parse()?;
    let key = age::x25519::Identity::generate();
    let recipient = key.to_public();
    let encryptor = || age::Encryptor::with_recipients(std::iter::once(&recipient as &dyn age::Recipient));

    let started = Instant::now();
    let mut writer = encryptor()?.wrap_output(io::sink())?;
    io::copy(&mut data(size), &mut writer)?;
    writer.finish()?;
    let encrypt_s = started.elapsed().as_secs_f64();

    // The file to decrypt, made untimed.
    let mut file = Vec::with_capacity(size as usize + size as usize / 4096 + 4096);
    let mut writer = encryptor()?.wrap_output(&mut file)?;
    io::copy(&mut data(size), &mut writer)?;
    writer.finish()?;

    let started = Instant::now();
    let decryptor = age::Decryptor::new(&file[..])?;
    let mut reader = decryptor.decrypt(std::iter::once(&key as &dyn age::Identity))?;
    let n = io::copy(&mut reader, &mut io::sink())?;
    let decrypt_s = started.elapsed().as_secs_f64();
    if n != size {
        return Err(format!("decrypted {n} bytes of {size}").into());
    }
    writeln!(io::stdout(), "{{\"encrypt_s\": {encrypt_s:.6}, \"decrypt_s\": {decrypt_s:.6}}}")?;
    Ok(())
}
