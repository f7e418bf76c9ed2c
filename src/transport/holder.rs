//! Who holds a port that cannot be bound, for the error's hint: which
//! process (from `/proc/net/tcp{,6}` and the processes' descriptors, as
//! `ss -p` finds it) and whether it shares the port (`SO_REUSEPORT`).
//!
//! A `--reuse-port` handover needs both servers to set `SO_REUSEPORT`:
//! the new one's bind fails with "address in use" beside an old one
//! started without it, which, told as "another program listens", sends
//! the user looking for a stranger. Whether the listener shares the port
//! is asked of the kernel itself: a socket with `SO_REUSEPORT` binds
//! beside it only when it does (and runs as the same user). That probe
//! is bound but never listens, so it takes no connection, and is closed
//! at once.

use std::net::SocketAddr;

/// The listener in the way of a bind, as far as it can be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its process: id and name (`ccc`), when this user may see it.
    pub process: Option<(u32, String)>,
    /// It set `SO_REUSEPORT` (and runs as this user): a server started
    /// with `--reuse-port` may listen beside it.
    pub shares: bool,
}

impl Holder {
    /// The listener on `addr`, which a bind just found in use.
    pub fn of(addr: SocketAddr) -> Holder {
        Holder {
            process: process_listening(addr),
            shares: shares(addr),
        }
    }

    /// `ccc (pid 1234)`, or `a program` when the process is not known.
    pub fn describe(&self) -> String {
        match &self.process {
            Some((pid, name)) => format!("{name} (pid {pid})"),
            None => "a program".to_string(),
        }
    }
}

/// Whether a socket with `SO_REUSEPORT` may bind `addr` beside its
/// listener.
fn shares(addr: SocketAddr) -> bool {
    use socket2::{Domain, Protocol, Socket, Type};
    let Ok(probe) = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
    else {
        return false;
    };
    probe.set_reuse_address(true).is_ok()
        && probe.set_reuse_port(true).is_ok()
        && probe.bind(&addr.into()).is_ok()
}

/// The process whose socket listens on `addr` (or on every address, at
/// its port).
fn process_listening(addr: SocketAddr) -> Option<(u32, String)> {
    let table = match addr {
        SocketAddr::V4(_) => "/proc/net/tcp",
        SocketAddr::V6(_) => "/proc/net/tcp6",
    };
    let text = std::fs::read_to_string(table).ok()?;
    let inode = text
        .lines()
        .skip(1)
        .find_map(|line| listening_inode(line, addr))?;
    let wanted = format!("socket:[{inode}]");
    for process in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = process
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|target| target.as_os_str() == wanted.as_str())
        });
        if holds {
            let name = std::fs::read_to_string(process.path().join("comm"))
                .map(|n| n.trim().to_string())
                .unwrap_or_else(|_| "?".into());
            return Some((pid, name));
        }
    }
    None
}

/// The inode of the socket a line of `/proc/net/tcp{,6}` describes, when
/// it listens (state `0A`) on `addr`'s port at `addr`'s address or at
/// every address.
fn listening_inode(line: &str, addr: SocketAddr) -> Option<u64> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
    if *state != "0A" {
        return None;
    }
    let (ip, port) = local.split_once(':')?;
    if u16::from_str_radix(port, 16).ok()? != addr.port() {
        return None;
    }
    let everywhere = ip.bytes().all(|b| b == b'0');
    if !everywhere && !ip.eq_ignore_ascii_case(&kernel_hex(addr)) {
        return None;
    }
    inode.parse().ok()
}

/// `addr`'s address as the kernel writes it in those tables: each 32-bit
/// word in the machine's (little-endian) order, in hex.
fn kernel_hex(addr: SocketAddr) -> String {
    let octets: Vec<u8> = match addr {
        SocketAddr::V4(a) => a.ip().octets().to_vec(),
        SocketAddr::V6(a) => a.ip().octets().to_vec(),
    };
    octets
        .chunks(4)
        .map(|word| {
            let value = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
            format!("{:08X}", value.swap_bytes())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_s_tables_are_read_as_written() {
        let addr: SocketAddr = "127.0.0.1:8333".parse().unwrap();
        assert_eq!(kernel_hex(addr), "0100007F");
        let line = "   3: 0100007F:208D 00000000:0000 0A 00000000:00000000 00:00000000 \
                    00000000     0        0 123456 1 0000000000000000 100 0 0 10 0";
        assert_eq!(listening_inode(line, addr), Some(123456));
        let any = line.replace("0100007F", "00000000");
        assert_eq!(listening_inode(&any, addr), Some(123456));
        let established = line.replace(" 0A ", " 01 ");
        assert_eq!(listening_inode(&established, addr), None);
        let other: SocketAddr = "127.0.0.1:8334".parse().unwrap();
        assert_eq!(listening_inode(line, other), None);
        let v6: SocketAddr = "[::1]:8333".parse().unwrap();
        assert_eq!(kernel_hex(v6), "00000000000000000000000001000000");
    }

    #[test]
    fn a_listener_is_found_with_whether_it_shares_its_port() {
        let plain =
            crate::transport::listen::bind("127.0.0.1:0".parse().unwrap(), false).expect("bind");
        let addr = plain.local_addr().unwrap();
        let holder = Holder::of(addr);
        assert!(!holder.shares);
        assert_eq!(holder.process.map(|(pid, _)| pid), Some(std::process::id()));
        let sharing =
            crate::transport::listen::bind("127.0.0.1:0".parse().unwrap(), true).expect("bind");
        assert!(Holder::of(sharing.local_addr().unwrap()).shares);
    }
}
