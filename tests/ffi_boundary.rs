//! The FFI boundary of `src/`: every raw call into libcurl and OpenSSL is in
//! `src/probe/curl_ffi/` (no `curl_sys`, `openssl_sys` or `extern "C"`
//! anywhere else, but for the binary's start-up hook), and that module is a leaf: no path in it leads out of
//! it into the rest of the crate (`super::` past its root, `crate::`).

use std::path::{Path, PathBuf};

const FFI: &str = "src/probe/curl_ffi";

/// The one other place allowed a link attribute and an `extern "C"` fn:
/// the binary's start-up hook (`.init_array.00200`), which looks at stdout
/// before the Rust runtime does, and at `SSLKEYLOGFILE` before libcurl
/// does, and calls into no C library. Lines as `code_only` leaves them.
const START_UP_HOOK: (&str, [&str; 3]) = (
    "src/main.rs",
    [
        "#[link_section = \"\"]",
        "static AT_START: extern \"\" fn() = at_start;",
        "extern \"\" fn at_start() {",
    ],
);

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source with comments and the insides of string literals blanked
/// (lines kept), so only code is searched.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if b[i] == b'r'
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && b[i + 1..]
                .iter()
                .position(|&c| c != b'#')
                .map(|p| b[i + 1 + p])
                == Some(b'"')
        {
            // A raw string: r"...", r#"..."#.
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = i + 2 + hashes;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            out.push_str("r\"");
            out.extend(std::iter::repeat_n(
                '\n',
                b[i..end].iter().filter(|&&c| c == b'\n').count(),
            ));
            out.push('"');
            i = end;
        } else if b[i] == b'"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                } else if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            out.push('"');
            i += 1;
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A character literal ('{', '\n', '\''), not a lifetime.
            let start = if b[i + 1] == b'\\' { i + 3 } else { i + 2 };
            let end = b[start..]
                .iter()
                .position(|&c| c == b'\'')
                .map_or(b.len(), |p| start + p + 1);
            out.push_str("' '");
            i = end;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn words(code: &str) -> Vec<(usize, String)> {
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut chars = code.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            line += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !(d.is_alphanumeric() || d == '_') {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            tokens.push((line, code[i..end].to_string()));
        } else if c == ':' && chars.peek().is_some_and(|&(_, d)| d == ':') {
            chars.next();
            tokens.push((line, "::".to_string()));
        } else if !c.is_whitespace() {
            tokens.push((line, c.to_string()));
        }
    }
    tokens
}

/// The module path of a file under `src/` (`probe::curl_ffi::live`).
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix("src").unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Every path in `file` (an FFI file) that leads out of the FFI module.
fn paths_out(file: &Path, code: &str) -> Vec<String> {
    let root: Vec<String> = module_of(Path::new(FFI));
    let tokens = words(code);
    let mut module = module_of(file);
    // Inline modules: (name, brace depth at which it closes).
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut found = Vec::new();
    let mut k = 0;
    while k < tokens.len() {
        let (line, t) = (&tokens[k].0, tokens[k].1.as_str());
        match t {
            "mod" if tokens.get(k + 2).is_some_and(|t| t.1 == "{") => {
                module.push(tokens[k + 1].1.clone());
                inline.push(depth);
                depth += 1;
                k += 3;
                continue;
            }
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if inline.last() == Some(&depth) {
                    inline.pop();
                    module.pop();
                }
            }
            "crate" if tokens.get(k + 1).is_some_and(|t| t.1 == "::") => {
                let path: Vec<&str> = tokens[k + 2..]
                    .iter()
                    .step_by(2)
                    .take(root.len())
                    .map(|t| t.1.as_str())
                    .collect();
                if path != root {
                    found.push(format!(
                        "{}:{line}: crate::{}",
                        file.display(),
                        path.join("::")
                    ));
                }
            }
            "super" if k == 0 || tokens[k - 1].1 != "::" => {
                let mut ups = 0;
                while tokens.get(k + 2 * ups).is_some_and(|t| t.1 == "super")
                    && tokens.get(k + 2 * ups + 1).is_some_and(|t| t.1 == "::")
                {
                    ups += 1;
                }
                let target = &module[..module.len().saturating_sub(ups)];
                if !target.starts_with(&root) {
                    let next = tokens.get(k + 2 * ups).map_or("", |t| t.1.as_str());
                    found.push(format!(
                        "{}:{line}: {}{next} (= {}::{next})",
                        file.display(),
                        "super::".repeat(ups),
                        target.join("::")
                    ));
                }
            }
            _ => {}
        }
        k += 1;
    }
    found
}

#[test]
fn raw_calls_are_all_in_the_ffi_module() {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(FFI)) {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        for (n, line) in code.lines().enumerate() {
            let raw = line.contains("curl_sys")
                || line.contains("openssl_sys")
                || line.contains("extern \"")
                || line.contains("#[link");
            let hook = file == Path::new(START_UP_HOOK.0) && START_UP_HOOK.1.contains(&line.trim());
            if raw && !hook {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "raw FFI outside {FFI}:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_ffi_module_imports_nothing_from_the_rest_of_the_crate() {
    let mut files = Vec::new();
    rust_files(Path::new(FFI), &mut files);
    assert!(files.len() > 5, "{FFI} has moved: update this test");
    let mut found = Vec::new();
    for file in &files {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        found.extend(paths_out(file, &code));
    }
    assert!(
        found.is_empty(),
        "paths out of {FFI}:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checks_see_what_they_are_meant_to() {
    let code = code_only(
        "// curl_sys in a comment\nlet s = \"openssl_sys { \";\nuse super::x;\nmod tests {\n use super::*;\n use super::super::types;\n}\nfn f() { crate::probe::curl_ffi::info::X; crate::probe::types::Y; }\n",
    );
    assert!(!code.contains("curl_sys") && !code.contains("openssl_sys"));
    let found = paths_out(Path::new("src/probe/curl_ffi/mod.rs"), &code);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].contains(":3: super::x (= probe::x)"), "{found:#?}");
    assert!(found[1].contains(":6: super::super::types"), "{found:#?}");
    assert!(found[2].contains(":8: crate::probe::types"), "{found:#?}");
    // One level down, `super::` is the FFI module itself.
    let found = paths_out(Path::new("src/probe/curl_ffi/live.rs"), &code);
    assert_eq!(found.len(), 1, "{found:#?}");
    let code = code_only(
        "let a = r#\"curl_sys \"quoted\" {\"#; let b = '{'; let c = '\\''; fn f<'a>() {}\n",
    );
    assert!(!code.contains("curl_sys"), "{code}");
    assert_eq!(code.matches('{').count(), 1, "{code}");
}
