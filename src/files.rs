//! Reading a file the user names (a CA bundle, a client certificate or key),
//! never more than a limit: `/dev/zero`, an endless pipe or a huge file ends
//! in a clear error instead of all the memory there is. The size a file
//! system reports is no guide (`/dev/zero` and a FIFO say 0), so the read
//! itself stops one byte past the limit. A leaf module.

use std::io::{self, Read};
use std::path::Path;

/// The most a CA bundle may hold (`--cacert`, `SSL_CERT_FILE`), and all the
/// certificates of `SSL_CERT_DIR` together: a bundle of every public root is
/// about 0.2 MiB.
pub const CA_LIMIT: u64 = 4 << 20;

/// The most a client certificate chain or its key may hold (`--cert`,
/// `--key`): a chain of a few certificates is a few KiB.
pub const CLIENT_PEM_LIMIT: u64 = 256 << 10;

/// Why a file could not be read whole.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    /// It holds more than the limit (at least one byte more was there).
    TooLarge,
}

/// `4 MiB`, `256 KiB`: a limit as the messages and the help say it.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The whole of `path`, if it holds at most `limit` bytes.
pub fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// [`read_capped`] with its error as one line: `named` says which file
/// (`--cert /tmp/c.pem`, `SSL_CERT_FILE=/dev/zero`), `holds` what it is for.
pub fn read_named(named: &str, path: &Path, limit: u64, holds: &str) -> Result<Vec<u8>, String> {
    read_capped(path, limit).map_err(|e| match e {
        ReadError::Io(e) => format!("{named}: {e}"),
        ReadError::TooLarge => format!(
            "{named} holds more than {}, the limit for {holds}",
            size_text(limit)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_stops_one_byte_past_the_limit() {
        let e = read_capped(Path::new("/dev/zero"), 1000).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge), "{e:?}");
        let text = read_named(
            "SSL_CERT_FILE=/dev/zero",
            Path::new("/dev/zero"),
            4 << 20,
            "a CA bundle",
        )
        .unwrap_err();
        assert_eq!(
            text,
            "SSL_CERT_FILE=/dev/zero holds more than 4 MiB, the limit for a CA bundle"
        );
    }

    #[test]
    fn a_file_at_the_limit_is_read_whole_and_one_byte_more_is_refused() {
        let dir = std::env::temp_dir().join(format!("tlsping-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("exact");
        std::fs::write(&path, [b'x'; 64]).unwrap();
        assert_eq!(read_capped(&path, 64).unwrap().len(), 64);
        assert!(matches!(read_capped(&path, 63), Err(ReadError::TooLarge)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn limits_are_said_in_their_unit() {
        assert_eq!(size_text(CA_LIMIT), "4 MiB");
        assert_eq!(size_text(CLIENT_PEM_LIMIT), "256 KiB");
        assert_eq!(size_text(1000), "1000 bytes");
    }
}
