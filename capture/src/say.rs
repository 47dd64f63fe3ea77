//! Capture's lines on the program's stderr: `hrr-capture: ` and the message, written with
//! write(2) directly. Never through std's `Stderr`, whose lock a thread of the parent may
//! hold across a fork (the child would wait for it forever), and whose `eprintln!` panics
//! when stderr is closed (a panic must not cross a shim).

/// Writes `hrr-capture: MSG` and a newline to fd 2; a failed write is dropped.
pub fn say(msg: &str) {
    let line = format!("hrr-capture: {msg}\n");
    let mut rest = line.as_bytes();
    while !rest.is_empty() {
        // SAFETY: writes bytes of our own buffer to fd 2; a closed fd fails with EBADF.
        let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        rest = &rest[n as usize..];
    }
}
