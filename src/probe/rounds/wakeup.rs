//! The CPU kept awake while a run measures. A CPU that sleeps through a
//! round trip takes time to wake when the answer comes, and that time lands
//! in whatever stage was waiting. The kernel's PM QoS interface lets a
//! process ask for a wake-up latency: writing a 32-bit 0 to
//! `/dev/cpu_dma_latency` keeps every CPU out of its deep idle states for as
//! long as the file stays open (cyclictest does the same). Closing it, or
//! the process ending for any reason, withdraws the request.

use std::fs::File;
use std::io::Write;

use super::run_info::WakeupNotHeld;

/// The kernel's PM QoS file for the CPU wake-up latency.
pub const CPU_DMA_LATENCY: &str = "/dev/cpu_dma_latency";

/// A request for a 0 µs wake-up latency, held while this value lives.
#[derive(Debug)]
pub struct WakeupPin {
    held: Result<File, WakeupNotHeld>,
}

impl WakeupPin {
    /// Asks for it. Only root (or whoever the device lets write) may: when
    /// the request cannot be made, the run measures as it would have
    /// anyway, and `why_not` says why.
    pub fn hold() -> WakeupPin {
        WakeupPin {
            held: hold_at(CPU_DMA_LATENCY),
        }
    }

    /// Whether the request is in force.
    pub fn held(&self) -> bool {
        self.held.is_ok()
    }

    /// Why it is not, if it is not.
    pub fn why_not(&self) -> Option<&WakeupNotHeld> {
        self.held.as_ref().err()
    }
}

/// Opens `path` (a character device, never waited on) and writes 0.
fn hold_at(path: &str) -> Result<File, WakeupNotHeld> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let failed = |e: std::io::Error| WakeupNotHeld::Failed {
        path: path.into(),
        error: e.to_string(),
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(failed)?;
    let is_device = file
        .metadata()
        .is_ok_and(|m| m.file_type().is_char_device());
    if !is_device {
        return Err(WakeupNotHeld::NotTheDevice { path: path.into() });
    }
    file.write_all(&0i32.to_ne_bytes()).map_err(failed)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_is_not_the_device_is_not_held() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("cpu_dma_latency");
        std::fs::write(&plain, "").unwrap();
        let path = plain.to_str().unwrap();
        let e = hold_at(path).unwrap_err();
        assert_eq!(e, WakeupNotHeld::NotTheDevice { path: path.into() });
        let e = hold_at("/nonexistent/cpu_dma_latency").unwrap_err();
        assert!(
            matches!(&e, WakeupNotHeld::Failed { path, .. } if path == "/nonexistent/cpu_dma_latency"),
            "{e:?}"
        );
    }
}
