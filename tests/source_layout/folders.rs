//! The folders of `src/`, checked with the files' imports:
//! - inside a layer with folders of its own (`probe`, `stats`, `render`),
//!   each folder is a floor, and a file imports only from its own floor and
//!   the floors below it, in the order `FLOORS` gives (a folder's
//!   sub-folders are on its floor; the layer's `mod.rs`, its table of
//!   contents, on none);
//! - no two folders import each other, directly or round a longer circle;
//! - no folder holds more than `MOST_FILES` Rust files (its `mod.rs` and
//!   its `*_tests.rs` counted);
//! - CONTRIBUTING.md's source map (and the Korean edition's, the same
//!   block) has a line for every folder under `src/`, each path it lists
//!   exists, each `.rs` file a line names is in that line's folder, and a
//!   layer's floors come in the order of `FLOORS`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::markdown::{code_blocks, section};
use super::{circle, resolve, sources, written_paths, SRC};

/// The floors of each layer that has folders, bottom-up: a file may import
/// from its own floor and those before it, never from one after it. `""`
/// is the files beside the layer's `mod.rs` (render's `output.rs`).
const FLOORS: [(&str, &[&str]); 3] = [
    (
        "probe",
        &[
            "curl_ffi", "reply", "settings", "data", "tls", "exchange", "rounds",
        ],
    ),
    ("stats", &["numbers", "records", "findings"]),
    (
        "render",
        &[
            "",
            "words",
            "tables",
            "machine",
            "write_out",
            "terminal",
            "pictures",
        ],
    ),
];

/// The most Rust files one folder holds.
const MOST_FILES: usize = 12;

/// Every file a file of `src/` imports (the paths it writes, each resolved
/// to the file that defines what it names), a `mod.rs` included: a
/// folder's `mod.rs` imports for its files, and may define what its
/// folder is named for.
fn arrows() -> Vec<(String, String)> {
    let files = sources();
    let mut out = BTreeSet::new();
    for file in files.keys() {
        for path in written_paths(file, &files) {
            if let Some(target) = resolve(&path, &files, 0) {
                if &target != file {
                    out.insert((file.clone(), target));
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The layer and floor (its place in `FLOORS`) of a file of a layer that
/// has floors; the layer's own `mod.rs` is above them all.
fn floor_of(file: &str) -> Option<(&'static str, usize)> {
    let (layer, rest) = file.split_once('/')?;
    let (name, floors) = FLOORS.iter().find(|(name, _)| *name == layer)?;
    if rest == "mod.rs" {
        return Some((name, floors.len()));
    }
    let folder = rest.split_once('/').map_or("", |(folder, _)| folder);
    let at = floors.iter().position(|f| *f == folder);
    Some((name, at.unwrap_or(floors.len())))
}

/// The arrows that run up a layer's floors, the layer's `mod.rs` (which
/// imports every floor) not counted as a file that imports.
fn upward_between_floors(arrows: &[(String, String)]) -> Vec<String> {
    arrows
        .iter()
        .filter(|(from, _)| !from.ends_with("/mod.rs") || from.matches('/').count() > 1)
        .filter_map(|(from, to)| {
            let (layer, below) = floor_of(from)?;
            let (to_layer, above) = floor_of(to)?;
            (layer == to_layer && above > below).then(|| format!("{from} imports {to}"))
        })
        .collect()
}

/// The folder of a file (`probe/tls/anatomy.rs` -> `probe/tls`; `""` for
/// the root).
fn folder_of(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The arrows between folders, each drawn between the two that sit side by
/// side under the folder both files are in (`render/terminal/rows/wide.rs`
/// -> `render/tables/fields.rs` is `render/terminal` -> `render/tables`);
/// a folder importing from one inside it, or the other way, draws none.
fn folder_arrows(arrows: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in arrows {
        let a: Vec<&str> = folder_of(from)
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        let b: Vec<&str> = folder_of(to).split('/').filter(|s| !s.is_empty()).collect();
        let same = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        if same == a.len() || same == b.len() {
            continue;
        }
        out.entry(a[..=same].join("/"))
            .or_default()
            .insert(b[..=same].join("/"));
    }
    out
}

/// The circles between folders, each spelled from its smallest folder.
fn folder_circles(arrows: &[(String, String)]) -> BTreeSet<Vec<String>> {
    let graph = folder_arrows(arrows);
    graph
        .keys()
        .filter_map(|f| circle(&graph, f))
        .map(|mut c| {
            c.pop();
            let at = c
                .iter()
                .enumerate()
                .min_by_key(|(_, f)| *f)
                .map_or(0, |(i, _)| i);
            c.rotate_left(at);
            c
        })
        .collect()
}

/// The folders of `files` (paths under `src/`) that hold more than
/// `MOST_FILES` of them, with their count.
fn crowded_folders<'a>(files: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for file in files {
        *count.entry(folder_of(file)).or_default() += 1;
    }
    count
        .into_iter()
        .filter(|&(_, n)| n > MOST_FILES)
        .map(|(folder, n)| format!("src/{folder}/: {n} files"))
        .collect()
}

/// Every folder under `src/`, as `src/x/y/`.
fn folders() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                let rel = path.strip_prefix(SRC).unwrap().to_string_lossy();
                out.insert(format!("src/{rel}/"));
                walk(&path, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(Path::new(SRC), &mut out);
    out
}

/// The source map of a CONTRIBUTING edition: the code block of the
/// section under `heading`, as (path, what the line says) for each line
/// that starts with a path (a line that does not goes on the one before).
fn source_map(document: &str, heading: &str) -> Vec<(String, String)> {
    let section = section(document, heading).unwrap_or_else(|| panic!("no '{heading}'"));
    let block = code_blocks(section)
        .into_iter()
        .next()
        .expect("the map, a code block");
    let mut out: Vec<(String, String)> = Vec::new();
    for line in block.code.lines() {
        let (first, rest) = line
            .trim_start()
            .split_once(' ')
            .unwrap_or((line.trim(), ""));
        let is_path = !line.starts_with(' ') && first.contains('/');
        match out.last_mut() {
            Some((_, says)) if !is_path => {
                says.push(' ');
                says.push_str(line.trim());
            }
            _ => out.push((first.to_string(), rest.trim().to_string())),
        }
    }
    out
}

/// What is wrong with a source map: a folder of `folders` it lacks, a path
/// it lists that `exists` denies, a `.rs` file a folder's line names that
/// is not in that folder, a layer's floors out of the order of `FLOORS`.
fn map_problems(
    map: &[(String, String)],
    folders: &BTreeSet<String>,
    exists: impl Fn(&str) -> bool,
) -> Vec<String> {
    let listed: BTreeSet<&str> = map.iter().map(|(path, _)| path.as_str()).collect();
    let mut out: Vec<String> = folders
        .iter()
        .filter(|f| !listed.contains(f.as_str()))
        .map(|f| format!("{f} is not in the map"))
        .collect();
    for (path, says) in map {
        if !exists(path) {
            out.push(format!("{path} does not exist"));
            continue;
        }
        if !path.ends_with('/') {
            continue;
        }
        let named = says
            .split(|c: char| !(c.is_ascii_alphanumeric() || "_./".contains(c)))
            .filter(|w| w.ends_with(".rs"));
        for file in named {
            if !exists(&format!("{path}{file}")) {
                out.push(format!("{path}'s line names {file}, which is not there"));
            }
        }
    }
    for (layer, floors) in FLOORS {
        let at: Vec<usize> = floors
            .iter()
            .filter(|f| !f.is_empty())
            .filter_map(|f| {
                let path = format!("src/{layer}/{f}/");
                map.iter().position(|(p, _)| *p == path)
            })
            .collect();
        if at.windows(2).any(|w| w[0] >= w[1]) {
            out.push(format!(
                "src/{layer}/'s floors are not in the order of FLOORS"
            ));
        }
    }
    out
}

fn repository_has(path: &str) -> bool {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path).exists()
}

#[test]
fn each_layer_imports_up_its_floors_only() {
    let upward = upward_between_floors(&arrows());
    assert!(
        upward.is_empty(),
        "arrows down a layer's floors (the order is `FLOORS`, in tests/source_layout/folders.rs): \
         {upward:#?}"
    );
}

#[test]
fn every_folder_of_a_layer_has_its_floor() {
    let all = folders();
    for (layer, floors) in FLOORS {
        let placed: BTreeSet<String> = floors
            .iter()
            .filter(|f| !f.is_empty())
            .map(|f| format!("src/{layer}/{f}/"))
            .collect();
        let present: BTreeSet<String> = all
            .iter()
            .filter(|f| f.starts_with(&format!("src/{layer}/")) && f.matches('/').count() == 3)
            .cloned()
            .collect();
        assert_eq!(
            present, placed,
            "src/{layer}/'s folders and its floors in FLOORS differ"
        );
    }
    // A layer with folders of its own has its floors in the table.
    for folder in all.iter().filter(|f| f.matches('/').count() == 3) {
        let layer = folder.split('/').nth(1).unwrap();
        assert!(
            FLOORS.iter().any(|(name, _)| *name == layer),
            "{folder}: src/{layer}/ has folders, so it has floors: give them in FLOORS"
        );
    }
}

#[test]
fn no_folder_imports_a_folder_that_imports_it_back() {
    let circles = folder_circles(&arrows());
    assert!(
        circles.is_empty(),
        "import circles between folders: {circles:#?}"
    );
}

#[test]
fn no_folder_holds_more_than_12_files() {
    let files = sources();
    let crowded = crowded_folders(files.keys().map(String::as_str));
    assert!(
        crowded.is_empty(),
        "folders over {MOST_FILES} Rust files (group them by what they hold, a folder \
         each): {crowded:#?}"
    );
}

#[test]
fn the_source_map_has_every_folder_and_only_what_is_there() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let english = std::fs::read_to_string(root.join("CONTRIBUTING.md")).unwrap();
    let korean = std::fs::read_to_string(root.join("CONTRIBUTING.ko.md")).unwrap();
    let map = source_map(&english, "## Source map");
    assert_eq!(
        source_map(&korean, "## 소스 구성"),
        map,
        "CONTRIBUTING.ko.md's source map is CONTRIBUTING.md's"
    );
    let problems = map_problems(&map, &folders(), repository_has);
    assert!(
        problems.is_empty(),
        "CONTRIBUTING.md's source map: {problems:#?}"
    );
}

#[test]
fn the_folder_checks_find_what_they_look_for() {
    let arrow = |from: &str, to: &str| (from.to_string(), to.to_string());
    // Down a layer's floors, and within one, are allowed; up is not, nor is
    // a floor importing what its layer's `mod.rs` defines.
    let arrows = [
        arrow("probe/rounds/cold.rs", "probe/data/types.rs"),
        arrow("probe/tls/anatomy.rs", "probe/tls/handshake_stamps.rs"),
        arrow("probe/data/types.rs", "probe/rounds/scheduler.rs"),
        arrow("render/machine/csv.rs", "render/output.rs"),
        arrow("render/output.rs", "render/tables/fields.rs"),
        arrow("render/tables/fields.rs", "render/mod.rs"),
        arrow("render/mod.rs", "render/pictures/svg_file.rs"),
        arrow("probe/curl_ffi/ssl/mod.rs", "probe/curl_ffi/setopt.rs"),
    ];
    assert_eq!(
        upward_between_floors(&arrows),
        [
            "probe/data/types.rs imports probe/rounds/scheduler.rs",
            "render/output.rs imports render/tables/fields.rs",
            "render/tables/fields.rs imports render/mod.rs",
        ]
    );
    // A circle between two folders, through files that make none.
    let circles = folder_circles(&[
        arrow("stats/records/history.rs", "stats/numbers/ci.rs"),
        arrow("stats/numbers/delta.rs", "stats/records/record.rs"),
        arrow("render/terminal/rows/wide.rs", "render/terminal/paint.rs"),
        arrow("render/terminal/human.rs", "render/terminal/rows/mod.rs"),
    ]);
    assert_eq!(
        circles.into_iter().collect::<Vec<_>>(),
        [vec!["stats/numbers".to_string(), "stats/records".into()]]
    );
    let thirteen: Vec<String> = (0..13).map(|i| format!("cli/f{i}.rs")).collect();
    assert_eq!(
        crowded_folders(thirteen.iter().map(String::as_str)),
        ["src/cli/: 13 files"]
    );
    assert!(crowded_folders(thirteen[1..].iter().map(String::as_str)).is_empty());
    // The map: a line that goes on, a missing folder, a file not there, a
    // path not there, floors out of order.
    let map = source_map(
        "# C\n\n## Source map\n\n    src/probe/tls/    a.rs and\n                      b.rs\n    \
         src/gone/    x\n    src/probe/data/    floors\n\n## Next\n",
        "## Source map",
    );
    assert_eq!(map[0], ("src/probe/tls/".into(), "a.rs and b.rs".into()));
    let folders: BTreeSet<String> = ["src/probe/tls/", "src/cli/"].map(String::from).into();
    let problems = map_problems(&map, &folders, |p| {
        p != "src/gone/" && p != "src/probe/tls/b.rs"
    });
    assert_eq!(
        problems,
        [
            "src/cli/ is not in the map",
            "src/probe/tls/'s line names b.rs, which is not there",
            "src/gone/ does not exist",
            "src/probe/'s floors are not in the order of FLOORS",
        ]
    );
}
