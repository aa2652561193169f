//! Standard output whose errors say what was being written: `writing standard output: No space
//! left on device`, never the bare error (a full disk, a closed pipe keep their kind).

use std::io::{self, Write};

/// Standard output, locked for the tool's life.
pub struct Stdout(io::StdoutLock<'static>);

pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

fn named(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("writing standard output: {e}"))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(named)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).map_err(named)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(named)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_standard_output_and_keeps_its_kind() {
        let e = named(io::Error::from_raw_os_error(28));
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        assert!(
            e.to_string()
                .starts_with("writing standard output: No space left on device"),
            "{e}"
        );
        let e = named(io::ErrorKind::BrokenPipe.into());
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }
}
