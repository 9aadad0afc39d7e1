//! Standard output, as every command writes it: through one [`Stdout`]
//! writer that the command is handed, never through `print!`.
//!
//! A reader may close the pipe early (`asogen schema | head`): the output
//! then ends quietly and the command still finishes with its own exit code,
//! where std's `print!` would panic. Any other write error (a full disk) is
//! kept and returned by [`Stdout::finish`], which turns a success into
//! exit code 2.

use std::fmt::Display;
use std::io::{self, ErrorKind, Write};

/// Standard output could not be written (for another reason than a closed
/// pipe).
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output: {0}")]
pub struct OutputError(#[source] pub io::Error);

/// Where a command's output goes: standard output, or any writer in tests.
pub struct Stdout<W: Write = io::Stdout> {
    sink: W,
    state: State,
}

enum State {
    Open,
    /// The reader went away; the rest of the output is dropped.
    Closed,
    /// A write failed; the rest of the output is dropped.
    Failed(io::Error),
}

impl Stdout {
    /// The process's standard output.
    pub fn new() -> Stdout {
        Stdout::to(io::stdout())
    }
}

impl Default for Stdout {
    fn default() -> Self {
        Stdout::new()
    }
}

impl<W: Write> Stdout<W> {
    /// Output into `sink`.
    pub fn to(sink: W) -> Stdout<W> {
        Stdout {
            sink,
            state: State::Open,
        }
    }

    /// Writes `text`, unless an earlier write ended the output.
    pub fn print(&mut self, text: impl Display) {
        if matches!(self.state, State::Open) {
            let result = write!(self.sink, "{text}");
            self.settle(result);
        }
    }

    /// Writes `text` and a newline.
    pub fn println(&mut self, text: impl Display) {
        self.print(format_args!("{text}\n"));
    }

    /// Flushes what is buffered; the first write error other than a closed
    /// pipe, if there was one.
    pub fn finish(mut self) -> Result<(), OutputError> {
        if matches!(self.state, State::Open) {
            let result = self.sink.flush();
            self.settle(result);
        }
        match self.state {
            State::Failed(err) => Err(OutputError(err)),
            State::Open | State::Closed => Ok(()),
        }
    }

    fn settle(&mut self, result: io::Result<()>) {
        if let Err(err) = result {
            self.state = if err.kind() == ErrorKind::BrokenPipe {
                State::Closed
            } else {
                State::Failed(err)
            };
        }
    }
}

pub use output_folder::printable;

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `room` bytes, then fails every write with `kind`.
    struct Tight {
        written: Vec<u8>,
        room: usize,
        kind: ErrorKind,
    }

    impl Write for Tight {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.written.len() + buf.len() > self.room {
                return Err(io::Error::from(self.kind));
            }
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn tight(room: usize, kind: ErrorKind) -> Stdout<Tight> {
        Stdout::to(Tight {
            written: Vec::new(),
            room,
            kind,
        })
    }

    #[test]
    fn output_is_written_in_order() {
        let mut out = Stdout::to(Vec::new());
        out.print("a");
        out.println(format_args!("b{}", 1));
        assert_eq!(out.sink, b"ab1\n");
        assert!(out.finish().is_ok());
    }

    #[test]
    fn a_closed_pipe_ends_the_output_quietly() {
        let mut out = tight(2, ErrorKind::BrokenPipe);
        out.print("ab");
        out.print("cd");
        out.print("e");
        assert_eq!(out.sink.written, b"ab");
        assert!(out.finish().is_ok());
    }

    #[test]
    fn another_write_error_ends_the_output_and_is_returned() {
        let mut out = tight(0, ErrorKind::StorageFull);
        out.print("x");
        out.print("y");
        let err = out.finish().unwrap_err();
        assert_eq!(err.0.kind(), ErrorKind::StorageFull);
        assert!(
            err.to_string()
                .starts_with("cannot write to standard output: ")
        );
    }
}
