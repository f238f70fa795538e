//! The age API as programs use it, over hyperseal: every key kind round-trips, user-written
//! recipients and identities work unchanged, the label rule holds, and the readers seek.

use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::iter;

use age::secrecy::SecretString;
use age_core::format::{FileKey, Stanza};
use hyperseal_age as age;

fn encrypt_to(recipients: &[&dyn age::Recipient], plaintext: &[u8]) -> Vec<u8> {
    let encryptor = age::Encryptor::with_recipients(recipients.iter().copied()).expect("recipients");
    let mut file = vec![];
    let mut writer = encryptor.wrap_output(&mut file).unwrap();
    // 8 KiB writes, as io::copy makes them.
    for piece in plaintext.chunks(8 << 10) {
        writer.write_all(piece).unwrap();
    }
    writer.finish().unwrap();
    file
}

fn decrypt_with(identity: &dyn age::Identity, file: &[u8]) -> Result<Vec<u8>, age::DecryptError> {
    let mut reader = age::Decryptor::new(file)?.decrypt(iter::once(identity))?;
    let mut plain = vec![];
    reader.read_to_end(&mut plain)?;
    Ok(plain)
}

/// A recipient written against age-core's types alone, as third-party crates write them: it
/// wraps with an X25519 key and files the stanza under its own type.
struct Renamed(age::x25519::Recipient);
struct RenamedIdentity(age::x25519::Identity);
const RENAMED: &str = "example.com/renamed";

impl age::Recipient for Renamed {
    fn wrap_file_key(&self, file_key: &FileKey) -> Result<(Vec<Stanza>, HashSet<String>), age::EncryptError> {
        let (stanzas, labels) = self.0.wrap_file_key(file_key)?;
        let renamed = stanzas
            .into_iter()
            .map(|s| Stanza { tag: RENAMED.into(), args: [vec![s.tag], s.args].concat(), body: s.body })
            .collect();
        Ok((renamed, labels))
    }
}

impl age::Identity for RenamedIdentity {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, age::DecryptError>> {
        if stanza.tag != RENAMED {
            return None;
        }
        let (tag, args) = stanza.args.split_first()?;
        let inner = Stanza { tag: tag.clone(), args: args.to_vec(), body: stanza.body.clone() };
        self.0.unwrap_stanza(&inner)
    }
}

#[test]
fn user_written_recipient_and_identity_round_trip() {
    let key = age::x25519::Identity::generate();
    let plain = vec![7u8; 200_000];
    let file = encrypt_to(&[&Renamed(key.to_public())], &plain);
    assert!(file.windows(RENAMED.len()).any(|w| w == RENAMED.as_bytes()), "the stanza is the type's own");
    assert_eq!(decrypt_with(&RenamedIdentity(key.clone()), &file).unwrap(), plain);
    assert!(matches!(decrypt_with(&key, &file), Err(age::DecryptError::NoMatchingKeys)));
}

#[test]
fn every_native_kind_round_trips_across_chunk_boundaries() {
    let x = age::x25519::Identity::generate();
    let pq = age::pq::Identity::generate();
    for len in [0, 1, 65535, 65536, 65537, 2 * 65536 + 500, 3 << 20] {
        let plain: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        assert_eq!(decrypt_with(&x, &encrypt_to(&[&x.to_public()], &plain)).unwrap(), plain, "x25519 {len}");
        assert_eq!(decrypt_with(&pq, &encrypt_to(&[&pq.to_public()], &plain)).unwrap(), plain, "pq {len}");
    }
}

/// Writes of every size the writer treats apart (below, at and above the 4 MiB it gathers, and
/// mixed) give the file that opens to the same bytes.
#[test]
fn the_writer_takes_writes_of_any_size() {
    let key = age::x25519::Identity::generate();
    let plain: Vec<u8> = (0..9_000_000u32).map(|i| (i % 249) as u8).collect();
    for sizes in [&[1usize, 65536, 4 << 20, 5 << 20, 3][..], &[9_000_000], &[4 << 20, 4 << 20, 1]] {
        let encryptor = age::Encryptor::with_recipients(iter::once(&key.to_public() as _)).unwrap();
        let mut file = vec![];
        let mut writer = encryptor.wrap_output(&mut file).unwrap();
        let (mut at, mut i) = (0, 0);
        while at < plain.len() {
            let n = sizes[i % sizes.len()].min(plain.len() - at);
            writer.write_all(&plain[at..at + n]).unwrap();
            if i % 3 == 1 {
                writer.flush().unwrap();
            }
            (at, i) = (at + n, i + 1);
        }
        writer.finish().unwrap();
        assert_eq!(decrypt_with(&key, &file).unwrap(), plain, "{sizes:?}");
    }
}

#[test]
fn keys_parse_and_print_as_age_spells_them() {
    let x = age::x25519::Identity::generate();
    let text = x.to_string();
    use age::secrecy::ExposeSecret;
    assert!(text.expose_secret().starts_with("AGE-SECRET-KEY-1"));
    let back: age::x25519::Identity = text.expose_secret().parse().unwrap();
    assert_eq!(back.to_public().to_string(), x.to_public().to_string());
    assert!(x.to_public().to_string().starts_with("age1"));
    let pq = age::pq::Identity::generate();
    assert!(pq.to_string().expose_secret().starts_with("AGE-SECRET-KEY-PQ-1"));
    assert!(pq.to_public().to_string().starts_with("age1pq1"));
    assert!("age1pq1".parse::<age::pq::Recipient>().is_err());
    assert!(x.to_public().to_string().parse::<age::pq::Recipient>().is_err());
    // Debug never shows a secret.
    assert!(!format!("{x:?}").contains("AGE-SECRET-KEY"));
    assert!(!format!("{pq:?}").contains("AGE-SECRET-KEY"));
}

#[test]
fn labels_keep_post_quantum_and_passphrase_files_apart() {
    let x = age::x25519::Identity::generate().to_public();
    let pq = age::pq::Identity::generate().to_public();
    let mixed = age::Encryptor::with_recipients([&x as &dyn age::Recipient, &pq].into_iter());
    assert!(matches!(mixed, Err(age::EncryptError::IncompatibleRecipients { .. })));
    let pass = age::scrypt::Recipient::new(SecretString::from("p".to_string()));
    let mixed = age::Encryptor::with_recipients([&x as &dyn age::Recipient, &pass].into_iter());
    assert!(matches!(mixed, Err(age::EncryptError::IncompatibleRecipients { .. })));
    let none = age::Encryptor::with_recipients(iter::empty());
    assert!(matches!(none, Err(age::EncryptError::MissingRecipients)));
}

#[test]
fn passphrase_round_trip_and_work_factor_cap() {
    let pass = || SecretString::from("correct horse".to_string());
    let mut recipient = age::scrypt::Recipient::new(pass());
    recipient.set_work_factor(12);
    let file = encrypt_to(&[&recipient], b"secret");
    let decryptor = age::Decryptor::new(&file[..]).unwrap();
    assert!(decryptor.is_scrypt());
    let mut identity = age::scrypt::Identity::new(pass());
    assert_eq!(decrypt_with(&identity, &file).unwrap(), b"secret");
    identity.set_max_work_factor(10);
    let capped = decrypt_with(&identity, &file);
    assert!(matches!(capped, Err(age::DecryptError::ExcessiveWork { required: 12, .. })), "{capped:?}");
    let wrong = age::scrypt::Identity::new(SecretString::from("wrong".to_string()));
    assert!(matches!(decrypt_with(&wrong, &file), Err(age::DecryptError::DecryptionFailed)));
}

#[cfg(feature = "armor")]
#[test]
fn armor_round_trip() {
    use age::armor::{ArmoredReader, ArmoredWriter, Format};
    let key = age::x25519::Identity::generate();
    let encryptor = age::Encryptor::with_recipients(iter::once(&key.to_public() as _)).unwrap();
    let mut out = vec![];
    let mut w =
        encryptor.wrap_output(ArmoredWriter::wrap_output(&mut out, Format::AsciiArmor).unwrap()).unwrap();
    w.write_all(&[1u8; 100_000]).unwrap();
    w.finish().unwrap().finish().unwrap();
    assert!(out.starts_with(b"-----BEGIN AGE ENCRYPTED FILE-----\n"));
    let d = age::Decryptor::new_buffered(ArmoredReader::new(&out[..])).unwrap();
    let mut plain = vec![];
    d.decrypt(iter::once(&key as _)).unwrap().read_to_end(&mut plain).unwrap();
    assert_eq!(plain, vec![1u8; 100_000]);
    let armored = age::encrypt_and_armor(&key.to_public(), b"hi").unwrap();
    assert_eq!(age::decrypt(&key, armored.as_bytes()).unwrap(), b"hi");
}

/// A pipe or socket that returns one byte per read.
#[cfg(feature = "armor")]
struct OneByte<'a>(&'a [u8]);

#[cfg(feature = "armor")]
impl Read for OneByte<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.0.len()).min(1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// The reader decides armor on as many bytes as the BEGIN line needs, not on one first read.
#[cfg(feature = "armor")]
#[test]
fn armor_is_recognised_one_byte_at_a_time() {
    use age::armor::ArmoredReader;
    let key = age::x25519::Identity::generate();
    let armored = age::encrypt_and_armor(&key.to_public(), b"secret").unwrap();
    for text in [armored.clone(), format!("\n  \r\n{armored}")] {
        let d = age::Decryptor::new_buffered(ArmoredReader::new(OneByte(text.as_bytes()))).unwrap();
        let mut plain = vec![];
        d.decrypt(iter::once(&key as _)).unwrap().read_to_end(&mut plain).unwrap();
        assert_eq!(plain, b"secret");
    }
    // A binary file read the same way, and seeking after the bytes looked at.
    let binary = age::encrypt(&key.to_public(), &[7u8; 70_000]).unwrap();
    let d = age::Decryptor::new_buffered(ArmoredReader::new(OneByte(&binary))).unwrap();
    let mut plain = vec![];
    d.decrypt(iter::once(&key as _)).unwrap().read_to_end(&mut plain).unwrap();
    assert_eq!(plain, vec![7u8; 70_000]);
    let mut r = ArmoredReader::new(std::io::Cursor::new(&binary[..]));
    let mut first = [0u8; 3];
    r.read_exact(&mut first).unwrap();
    assert_eq!(r.stream_position().unwrap(), 3);
    assert_eq!(r.seek(SeekFrom::Current(-3)).unwrap(), 0);
}

#[test]
fn identity_file_holds_classic_and_post_quantum_keys() {
    use age::secrecy::ExposeSecret;
    let x = age::x25519::Identity::generate();
    let pq = age::pq::Identity::generate();
    let text =
        format!("# created: now\n{}\n\n{}\n", x.to_string().expose_secret(), pq.to_string().expose_secret());
    let file = age::IdentityFile::from_buffer(text.as_bytes()).unwrap();
    let mut recipients_file = vec![];
    file.write_recipients_file(&mut recipients_file).unwrap();
    let expected = format!("{}\n{}\n", x.to_public(), pq.to_public());
    assert_eq!(String::from_utf8(recipients_file).unwrap(), expected);
    let recipients = file.to_recipients().unwrap();
    assert_eq!(recipients.len(), 2);
    let ids = file.into_identities().unwrap();
    let encrypted = encrypt_to(&[&pq.to_public()], b"pq only");
    let mut r =
        age::Decryptor::new(&encrypted[..]).unwrap().decrypt(ids.iter().map(|i| i.as_ref() as _)).unwrap();
    let mut plain = vec![];
    r.read_to_end(&mut plain).unwrap();
    assert_eq!(plain, b"pq only");
    let bad = age::IdentityFile::from_buffer(&b"AGE-SECRET-KEY-1NOTAKEY\n"[..]).err().unwrap();
    assert!(bad.to_string().contains("line 1") && !bad.to_string().contains("NOTAKEY"));
}

#[test]
fn the_reader_seeks() {
    let key = age::x25519::Identity::generate();
    let plain: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    let file = encrypt_to(&[&key.to_public()], &plain);
    let mut r =
        age::Decryptor::new(std::io::Cursor::new(&file)).unwrap().decrypt(iter::once(&key as _)).unwrap();
    r.seek(SeekFrom::Start(200_000)).unwrap();
    let mut tail = vec![];
    r.read_to_end(&mut tail).unwrap();
    assert_eq!(tail, &plain[200_000..]);
    assert_eq!(r.seek(SeekFrom::End(-10)).unwrap(), plain.len() as u64 - 10);
}

#[test]
fn tag_recipients_parse_and_encrypt() {
    // age's own test vector recipients (c2sp.org/age tag kinds) are long; a malformed one fails.
    assert!("age1tag1qqqq".parse::<age::tag::Recipient>().is_err());
    assert!("age1tagpq1qqqq".parse::<age::tagpq::Recipient>().is_err());
}

/// age's asynchronous armored writer: the armor is whole once the writer is closed, the same
/// text the synchronous reader (and age) read, in binary form straight through.
#[cfg(all(feature = "async", feature = "armor"))]
#[test]
fn async_armored_writing() {
    use age::armor::{ArmoredReader, ArmoredWriter, Format};
    use futures::AsyncWriteExt;
    let key = age::x25519::Identity::generate();
    let plain: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
    for format in [Format::AsciiArmor, Format::Binary] {
        let file = futures::executor::block_on(async {
            let mut file = vec![];
            let armored = ArmoredWriter::wrap_async_output(&mut file, format);
            let encryptor = age::Encryptor::with_recipients(iter::once(&key.to_public() as _)).unwrap();
            let mut w = encryptor.wrap_async_output(armored).await.unwrap();
            // Pieces of 1000 bytes, as an asynchronous copy makes them.
            for piece in plain.chunks(1000) {
                AsyncWriteExt::write_all(&mut w, piece).await.unwrap();
            }
            w.close().await.unwrap();
            file
        });
        if format == Format::AsciiArmor {
            let text = std::str::from_utf8(&file).expect("armor is text");
            assert!(text.starts_with("-----BEGIN AGE ENCRYPTED FILE-----\n"), "{}", &text[..40]);
            assert!(text.ends_with("-----END AGE ENCRYPTED FILE-----\n"));
            assert!(text.lines().all(|l| l.len() <= 64));
        } else {
            assert!(file.starts_with(b"age-encryption.org/v1\n"));
        }
        let d = age::Decryptor::new(ArmoredReader::new(&file[..])).unwrap();
        let mut got = vec![];
        d.decrypt(iter::once(&key as &dyn age::Identity)).unwrap().read_to_end(&mut got).unwrap();
        assert!(got == plain, "{format:?}");
    }
}

#[cfg(feature = "async")]
#[test]
fn async_round_trip() {
    use futures::{AsyncReadExt, AsyncWriteExt};
    let key = age::x25519::Identity::generate();
    let plain = vec![9u8; 150_000];
    futures::executor::block_on(async {
        let encryptor = age::Encryptor::with_recipients(iter::once(&key.to_public() as _)).unwrap();
        let mut file = vec![];
        let mut w = encryptor.wrap_async_output(&mut file).await.unwrap();
        AsyncWriteExt::write_all(&mut w, &plain).await.unwrap();
        w.close().await.unwrap();
        let d = age::Decryptor::new_async(&file[..]).await.unwrap();
        let mut r = d.decrypt_async(iter::once(&key as _)).unwrap();
        let mut got = vec![];
        AsyncReadExt::read_to_end(&mut r, &mut got).await.unwrap();
        assert_eq!(got, plain);
    });
}
