//! The run folder keeps what it can. A full disk never costs a judge its answer or a record on
//! standard output, but the first thing the folder could not keep is remembered, and the tool
//! reports it and exits 2 when its work is done (see [`crate::tools::main`]).

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

static LOST: Mutex<Option<String>> = Mutex::new(None);

/// Notes that `path` could not be kept; only the first loss is reported.
pub fn lose(path: &Path, e: &std::io::Error) {
    let mut lost = LOST.lock().unwrap_or_else(|p| p.into_inner());
    lost.get_or_insert_with(|| format!("{}: cannot keep: {e}", path.display()));
}

/// The first loss, if any.
pub fn loss() -> Option<String> {
    LOST.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Creates a folder of the run folder; false (and a loss) when it cannot.
pub fn dir(path: &Path) -> bool {
    fs::create_dir_all(path).map_err(|e| lose(path, &e)).is_ok()
}

/// Writes a file of the run folder. A file it could not write whole is removed: a file there is
/// a file kept whole.
pub fn file(path: &Path, bytes: impl AsRef<[u8]>) {
    if let Err(e) = fs::write(path, bytes) {
        let _ = fs::remove_file(path);
        lose(path, &e);
    }
}

/// An append-only file of lines that never holds a torn line: a line that cannot be written
/// whole is cut off again, and nothing after it is written, so the file stays a prefix of what
/// went to standard output.
pub struct Ledger {
    file: Option<fs::File>,
    len: u64,
    path: std::path::PathBuf,
}

impl Ledger {
    /// Creates (or empties) the ledger; an error here stops the run before any judge starts.
    pub fn create(path: &Path) -> anyhow::Result<Ledger> {
        let file = fs::File::create(path)
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
        Ok(Ledger {
            file: Some(file),
            len: 0,
            path: path.to_path_buf(),
        })
    }

    pub fn push(&mut self, line: &str) {
        let Some(file) = &mut self.file else { return };
        let bytes = format!("{line}\n");
        match file.write_all(bytes.as_bytes()) {
            Ok(()) => self.len += bytes.len() as u64,
            Err(e) => {
                let _ = file.set_len(self.len);
                lose(&self.path, &e);
                self.file = None;
            }
        }
    }
}
