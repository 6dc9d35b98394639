//! The release binary's size budget (vendor-notes.md, "What the binary is
//! made of"). `cargo test` never builds a release binary: this check reads one
//! that `cargo build --release` left in the target directory, and skips
//! without one (fails without one when `CI=true`). `.ci/run` builds it first. The budget
//! is for x86_64 Linux, where the figures in vendor-notes.md were measured.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

/// What the loaded binary may weigh. 7.5 MiB is where it
/// stood before the SVG output; the parts left out of OpenSSL and libcurl
/// brought it to about 6.7 MiB, so new features have room, but not unnoticed.
const BUDGET: u64 = 7 * 1024 * 1024 + 512 * 1024;

#[test]
fn the_release_binary_stays_within_its_budget() {
    let Some(bin) = release_or_skip() else {
        return;
    };
    let elf = std::fs::read(&bin).expect("reading the release binary");
    let loaded = loaded_bytes(&elf);
    assert!(
        loaded <= BUDGET,
        "{} loads {loaded} bytes, over the budget of {BUDGET}: see vendor-notes.md for \
         what each part costs and how to measure it (a CFLAGS, TARGET_CFLAGS or \
         CFLAGS_<target> set in the environment replaces .cargo/config.toml's)",
        bin.display()
    );
}

/// The figure docs/performance.md (and its Korean edition) give for the
/// release binary is its size, to the tenth of a MiB it is written with
/// (a little more, for what a change adds before the figure is measured
/// again).
#[test]
fn the_documented_size_is_the_binarys() {
    let Some(bin) = release_or_skip() else {
        return;
    };
    let meta = std::fs::metadata(&bin).expect("the release binary's size");
    let mib = meta.len() as f64 / (1024.0 * 1024.0);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (doc, before, after) in [
        ("docs/performance.md", "comes to about ", " MiB"),
        ("docs/ko/performance.md", "릴리스 바이너리는 약 ", " MiB"),
    ] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let figure: f64 = text
            .split_once(before)
            .and_then(|(_, rest)| rest.split_once(after))
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or_else(|| panic!("{doc}: no `{before}N{after}`"));
        assert!(
            (figure - mib).abs() <= 0.1,
            "{doc} says about {figure} MiB; the release binary is {mib:.2} MiB ({} bytes)",
            meta.len()
        );
    }
}

/// The release binary, or `None` after one line where there is none (which
/// fails under `CI=true`: .ci/run builds one first).
fn release_or_skip() -> Option<std::path::PathBuf> {
    let bin = release_binary();
    if bin.is_file() {
        return Some(bin);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "no release binary at {} under CI=true (.ci/run builds one first)",
        bin.display()
    );
    // Straight to the process's stderr: libtest captures the print macros.
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "skipped: no release binary at {} (cargo build --release)",
        bin.display()
    );
    None
}

/// The release build of the binary under test: the `release` directory next
/// to the profile directory the test binary came from.
fn release_binary() -> std::path::PathBuf {
    let tested = std::path::Path::new(env!("CARGO_BIN_EXE_tlsping"));
    let profile_dir = tested.parent().expect("the binary has a directory");
    profile_dir
        .parent()
        .expect("the profile directory has a parent")
        .join("release")
        .join("tlsping")
}

/// The bytes of every section the program loads from the file (code, data,
/// relocations, unwind tables; not `.bss`), read from the ELF section
/// headers. Symbols and debug information are not loaded, so a build with
/// `strip = false` or debug info counts the same as the stripped one.
fn loaded_bytes(elf: &[u8]) -> u64 {
    const SHF_ALLOC: u64 = 0x2;
    const SHT_NOBITS: u32 = 8;
    assert_eq!(&elf[..5], b"\x7fELF\x02", "not a 64-bit ELF file");
    let u16_at = |at: usize| u16::from_le_bytes(elf[at..at + 2].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(elf[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap());
    let table = u64_at(0x28) as usize;
    let entry = usize::from(u16_at(0x3a));
    let count = usize::from(u16_at(0x3c));
    (0..count)
        .map(|i| table + i * entry)
        .filter(|&h| u32_at(h + 4) != SHT_NOBITS && u64_at(h + 8) & SHF_ALLOC != 0)
        .map(|h| u64_at(h + 0x20))
        .sum()
}
