//! A TLS connection's records, on rustls's unbuffered API, so that ccc
//! holds the buffers and an idle connection holds none.
//!
//! rustls's buffered connection keeps a 4 KiB record buffer for as long as
//! the connection lives. Here the buffers a connection needs exist only
//! while they hold something:
//! - `incoming`: bytes read from the socket and not yet decrypted;
//! - `outgoing`: records encrypted and not yet written;
//! - `plain`: decrypted bytes the protocol had no room for yet.
//!
//! Once they are empty, a read that has to wait or a flush that is done
//! puts them back in a small pool of the thread's ([`spare`]), which the
//! next busy connection on that thread takes them from: a connection that
//! waits between requests costs no allocation, and an idle one holds only
//! its socket and rustls's keys and state.
//!
//! Writes are encrypted at once, up to [`OUT_MAX`] ahead of the socket, as
//! rustls's own writer does. A vectored write (hyper's head and body) is
//! gathered into one record, not one record per slice.

use super::super::watched::poll_write_out;
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::server::{ServerConnectionData, UnbufferedServerConnection};
use tokio_rustls::rustls::unbuffered::{
    ConnectionState, EncodeError, EncodeTlsData, EncryptError, UnbufferedStatus, WriteTraffic,
};

/// Encrypted bytes held ahead of the socket before writes wait for it.
const OUT_MAX: usize = 64 * 1024;
/// What a read asks the socket for, at least.
const READ_CHUNK: usize = 4096;
/// The most one record takes on the wire: its 5-byte header and at most
/// 2^14 + 256 bytes of ciphertext (RFC 8446 5.2).
const RECORD_MAX: usize = 5 + (1 << 14) + 256;
/// The most `incoming` holds unprocessed: a handshake message (at most
/// 64 KiB in rustls) may come in many records, which rustls keeps in
/// `incoming` until the message is whole. A client that sends more has
/// no message to finish.
const INCOMING_MAX: usize = 2 << 16;
/// Room for one record's header, tag and padding, over its plaintext.
const RECORD_OVERHEAD: usize = 64;

/// A server-side TLS connection over a TCP socket, after its handshake.
pub(crate) struct Stream {
    tcp: TcpStream,
    conn: UnbufferedServerConnection,
    /// `incoming[taken..]` came from the socket and awaits rustls.
    incoming: Vec<u8>,
    taken: usize,
    /// `outgoing[sent..]` awaits the socket.
    outgoing: Vec<u8>,
    sent: usize,
    /// `plain[read..]` is decrypted and awaits the protocol.
    plain: Vec<u8>,
    read: usize,
    /// A vectored write's slices, joined to be encrypted as one.
    gather: Vec<u8>,
    /// The client sent close_notify, or closed its side of the socket.
    ended: bool,
    close_queued: bool,
}

/// What one step of rustls's state machine came to.
enum Step {
    /// Something was done; step again.
    Again,
    /// rustls needs more bytes from the client.
    NeedBytes,
    /// Application data may be written (and read, once it comes).
    Open,
    /// `n` bytes of the write were encrypted into `outgoing`.
    Encrypted(usize),
    /// Both sides have sent close_notify.
    Closed,
}

/// What a step is asked to do once it can write application data.
#[derive(Clone, Copy)]
enum Want<'a> {
    Nothing,
    Encrypt(&'a [u8]),
    CloseNotify,
}

impl Stream {
    /// Runs the server's side of a handshake on `tcp`: the stream once the
    /// handshake is complete, with whatever the client sent after it kept
    /// for the first read.
    pub(crate) async fn accept(tcp: TcpStream, config: Arc<ServerConfig>) -> io::Result<Stream> {
        let conn = UnbufferedServerConnection::new(config).map_err(invalid)?;
        let mut stream = Stream {
            tcp,
            conn,
            incoming: Vec::new(),
            taken: 0,
            outgoing: Vec::new(),
            sent: 0,
            plain: Vec::new(),
            read: 0,
            gather: Vec::new(),
            ended: false,
            close_queued: false,
        };
        match stream.handshake().await {
            Ok(()) => Ok(stream),
            Err(e) => {
                stream.send_alert();
                Err(e)
            }
        }
    }

    async fn handshake(&mut self) -> io::Result<()> {
        loop {
            match self.step(Want::Nothing, None)? {
                Step::Again => continue,
                Step::Open if !self.conn.is_handshaking() => break,
                Step::NeedBytes | Step::Open => {
                    poll_fn(|cx| self.poll_send(cx)).await?;
                    if poll_fn(|cx| self.poll_fill(cx)).await? == 0 {
                        return Err(io::ErrorKind::UnexpectedEof.into());
                    }
                }
                Step::Encrypted(_) | Step::Closed => {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
            }
        }
        poll_fn(|cx| self.poll_send(cx)).await
    }

    /// Whether the client chose HTTP/2 by ALPN.
    pub(crate) fn is_h2(&self) -> bool {
        self.conn.alpn_protocol() == Some(b"h2")
    }

    pub(crate) fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    /// Whether bytes the client sent are held here, so that a read would
    /// not wait for the socket.
    pub(crate) fn holds_unread(&self) -> bool {
        self.read < self.plain.len() || self.taken < self.incoming.len()
    }

    /// Advances rustls by one state with the bytes in `incoming`, and does
    /// what that state asks. Decrypted bytes go to `reader` while it has
    /// room, and to `plain` after.
    fn step(&mut self, want: Want<'_>, mut reader: Option<&mut ReadBuf<'_>>) -> io::Result<Step> {
        let Stream {
            conn,
            incoming,
            taken,
            outgoing,
            plain,
            ended,
            close_queued,
            ..
        } = self;
        let UnbufferedStatus { discard, state } = conn.process_tls_records(&mut incoming[*taken..]);
        let mut discard = discard;
        let step = match state.map_err(invalid)? {
            ConnectionState::ReadTraffic(mut records) => {
                while let Some(record) = records.next_record() {
                    let record = record.map_err(invalid)?;
                    let mut payload = record.payload;
                    if let Some(reader) = reader.as_deref_mut() {
                        let n = reader.remaining().min(payload.len());
                        reader.put_slice(&payload[..n]);
                        payload = &payload[n..];
                    }
                    plain.extend_from_slice(payload);
                    discard += record.discard;
                }
                Step::Again
            }
            ConnectionState::EncodeTlsData(handshake) => {
                encode(handshake, outgoing)?;
                Step::Again
            }
            // Encoded records are in `outgoing`, ahead of anything written
            // after them; whoever waits next sends them first.
            ConnectionState::TransmitTlsData(transmit) => {
                transmit.done();
                Step::Again
            }
            ConnectionState::BlockedHandshake => Step::NeedBytes,
            ConnectionState::PeerClosed => {
                *ended = true;
                Step::Again
            }
            ConnectionState::Closed => Step::Closed,
            ConnectionState::WriteTraffic(mut traffic) => match want {
                Want::Nothing => Step::Open,
                Want::Encrypt(data) => Step::Encrypted(encrypt(&mut traffic, data, outgoing)?),
                Want::CloseNotify => {
                    close_notify(&mut traffic, outgoing)?;
                    *close_queued = true;
                    Step::Open
                }
            },
            // Early data is not accepted, so it never comes.
            other => return Err(invalid(format!("unexpected TLS state {other:?}"))),
        };
        *taken += discard;
        if *taken == incoming.len() {
            *taken = 0;
            incoming.clear();
        }
        Ok(step)
    }

    /// Writes `outgoing` to the socket until it is all sent.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(poll_write_out(
            &mut self.tcp,
            cx,
            &self.outgoing,
            &mut self.sent
        ))?;
        self.outgoing.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }

    /// Reads what the socket has into `incoming`: how many bytes (0 at the
    /// end of the stream). Room is made only once the socket is readable.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.incoming.len() - self.taken >= INCOMING_MAX {
            return Poll::Ready(Err(invalid("a TLS message longer than 128 KiB")));
        }
        loop {
            ready!(self.tcp.poll_read_ready(cx))?;
            self.make_room();
            match self.tcp.try_read_buf(&mut self.incoming) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    /// Room in `incoming` for the rest of a record begun, or for
    /// [`READ_CHUNK`] bytes.
    fn make_room(&mut self) {
        if self.taken > 0 {
            self.incoming.drain(..self.taken);
            self.taken = 0;
        }
        if self.incoming.capacity() == 0 {
            self.incoming = spare::take();
        }
        let record = match self.incoming[..] {
            [_, _, _, high, low, ..] => 5 + usize::from(u16::from_be_bytes([high, low])),
            _ => 0,
        };
        let want = record
            .min(RECORD_MAX)
            .saturating_sub(self.incoming.len())
            .max(READ_CHUNK);
        self.incoming.reserve(want);
    }

    /// Puts the buffers back once nothing is held in them.
    fn shed_if_empty(&mut self) {
        if self.incoming.is_empty() && self.outgoing.is_empty() && self.read == self.plain.len() {
            spare::give(std::mem::take(&mut self.incoming));
            spare::give(std::mem::take(&mut self.outgoing));
            spare::give(std::mem::take(&mut self.gather));
            self.plain = Vec::new();
            self.read = 0;
        }
    }

    /// After an error, the alert rustls queued (a record that did not
    /// decrypt, a handshake refused), if the socket takes it now.
    fn send_alert(&mut self) {
        if let Ok(Step::Again) = self.step(Want::Nothing, None) {
            let _ = self.tcp.try_write(&self.outgoing[self.sent..]);
        }
    }

    /// Encrypts as much of `data` as the room ahead of the socket allows.
    fn poll_encrypt(&mut self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        if self.outgoing.len() - self.sent >= OUT_MAX {
            // Pending until the socket takes some; then try to go on.
            let _ = self.poll_send(cx)?;
            if self.outgoing.len() - self.sent >= OUT_MAX {
                return Poll::Pending;
            }
        }
        if self.outgoing.capacity() == 0 {
            self.outgoing = spare::take();
        }
        // What the socket took goes, so that a client that reads slowly
        // but never quite catches up does not grow the buffer.
        if self.sent > 0 {
            self.outgoing.drain(..self.sent);
            self.sent = 0;
        }
        let room = OUT_MAX - self.outgoing.len();
        let data = &data[..data.len().min(room)];
        let n = loop {
            match self.step(Want::Encrypt(data), None)? {
                Step::Encrypted(n) => break n,
                Step::Again | Step::Open => continue,
                Step::NeedBytes => return Poll::Ready(Err(io::ErrorKind::NotConnected.into())),
                Step::Closed => return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
            }
        };
        // Out now if the socket takes it; otherwise at the next flush.
        let _ = self.poll_send(cx)?;
        Poll::Ready(Ok(n))
    }

    /// Encrypts `bufs` joined, as one write: hyper's head and body make
    /// one record. An empty write writes nothing.
    fn poll_encrypt_gathered(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut gather = std::mem::take(&mut self.gather);
        if gather.capacity() == 0 {
            gather = spare::take();
        }
        gather.clear();
        for b in bufs {
            let room = OUT_MAX - gather.len();
            gather.extend_from_slice(&b[..b.len().min(room)]);
        }
        let wrote = if gather.is_empty() {
            Poll::Ready(Ok(0))
        } else {
            self.poll_encrypt(cx, &gather)
        };
        self.gather = gather;
        wrote
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        loop {
            if this.read < this.plain.len() {
                let n = buf.remaining().min(this.plain.len() - this.read);
                buf.put_slice(&this.plain[this.read..this.read + n]);
                this.read += n;
                if this.read == this.plain.len() {
                    this.plain.clear();
                    this.read = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let step = match this.step(Want::Nothing, Some(buf)) {
                Ok(step) => step,
                Err(e) => {
                    this.send_alert();
                    return Poll::Ready(Err(e));
                }
            };
            match step {
                Step::Again if buf.filled().len() > before => return Poll::Ready(Ok(())),
                Step::Again => continue,
                Step::Closed => return Poll::Ready(Ok(())),
                Step::NeedBytes | Step::Open | Step::Encrypted(_) => {
                    // What rustls queued meanwhile (session tickets, a key
                    // update) goes out when the socket takes it.
                    let _ = this.poll_send(cx)?;
                    match this.poll_fill(cx) {
                        Poll::Ready(Ok(0)) => this.ended = true,
                        Poll::Ready(Ok(_)) => {}
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                        Poll::Pending => {
                            this.shed_if_empty();
                            return Poll::Pending;
                        }
                    }
                }
            }
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.get_mut().poll_encrypt(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let mut slices = bufs.iter().filter(|b| !b.is_empty());
        let (Some(first), None) = (slices.next(), slices.next()) else {
            return this.poll_encrypt_gathered(cx, bufs);
        };
        this.poll_encrypt(cx, first)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        this.shed_if_empty();
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while !this.close_queued {
            match this.step(Want::CloseNotify, None)? {
                Step::Again | Step::Open | Step::Encrypted(_) => {}
                Step::NeedBytes | Step::Closed => break,
            }
        }
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.tcp).poll_shutdown(cx)
    }
}

/// Copies a handshake record rustls made to the end of `outgoing`.
fn encode(
    mut handshake: EncodeTlsData<'_, ServerConnectionData>,
    outgoing: &mut Vec<u8>,
) -> io::Result<()> {
    let end = outgoing.len();
    let need = match handshake.encode(&mut []) {
        Err(EncodeError::InsufficientSize(short)) => short.required_size,
        Ok(_) => return Ok(()),
        Err(e) => return Err(invalid(e)),
    };
    outgoing.resize(end + need, 0);
    let n = handshake.encode(&mut outgoing[end..]).map_err(invalid)?;
    outgoing.truncate(end + n);
    Ok(())
}

/// Encrypts `data` into records at the end of `outgoing`: how much.
fn encrypt(
    traffic: &mut WriteTraffic<'_, ServerConnectionData>,
    data: &[u8],
    outgoing: &mut Vec<u8>,
) -> io::Result<usize> {
    let end = outgoing.len();
    let records = data.len().div_ceil(1 << 14).max(1);
    let mut need = data.len() + records * RECORD_OVERHEAD;
    loop {
        outgoing.resize(end + need, 0);
        match traffic.encrypt(data, &mut outgoing[end..]) {
            Ok(n) => {
                outgoing.truncate(end + n);
                return Ok(data.len());
            }
            Err(EncryptError::InsufficientSize(short)) if short.required_size > need => {
                need = short.required_size;
            }
            Err(e) => {
                outgoing.truncate(end);
                return Err(invalid(e));
            }
        }
    }
}

fn close_notify(
    traffic: &mut WriteTraffic<'_, ServerConnectionData>,
    outgoing: &mut Vec<u8>,
) -> io::Result<()> {
    let end = outgoing.len();
    outgoing.resize(end + RECORD_OVERHEAD, 0);
    let n = traffic
        .queue_close_notify(&mut outgoing[end..])
        .map_err(invalid)?;
    outgoing.truncate(end + n);
    Ok(())
}

/// Buffers that connections on this thread emptied, for the next one that
/// needs one: at most [`spare::KEPT`] of them, of at most
/// [`spare::LARGEST`] bytes each, so what the pool holds is bounded per
/// thread whatever connections come and go.
mod spare {
    use std::cell::RefCell;

    pub(super) const KEPT: usize = 8;
    pub(super) const LARGEST: usize = 32 * 1024;

    thread_local! {
        static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    }

    pub(super) fn take() -> Vec<u8> {
        SPARE
            .with(|spare| spare.borrow_mut().pop())
            .unwrap_or_default()
    }

    pub(super) fn give(mut buffer: Vec<u8>) {
        if buffer.capacity() == 0 || buffer.capacity() > LARGEST {
            return;
        }
        buffer.clear();
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            if spare.len() < KEPT {
                spare.push(buffer);
            }
        });
    }
}

fn invalid(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}
