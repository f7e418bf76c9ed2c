//! Request bodies, for the few requests whose handler reads one (an
//! upload: [`super::Handler::defers`]). Every other request's body is
//! dropped unread, as before: hyper then discards or refuses it, and h2
//! gives its window back.
//!
//! A body is read as it arrives, one piece at a time, with the protocol's
//! own backpressure: over HTTP/1.1 hyper reads the socket only when asked
//! for the next piece (and sends `100 Continue` only then, so a refused
//! upload is refused before its body is sent); over HTTP/2 the stream's
//! window is given back ([`h2::RecvStream::flow_control`]) only for a
//! piece handed on, so a reader that stops makes the client stop after
//! one window. Memory holds one piece (and, over HTTP/2, one window) per
//! upload, whatever its size.
//!
//! A client that stops sending mid-body is cut off after
//! `--body-timeout` without a byte (nginx's `client_body_timeout`: the
//! time between two reads, not for the whole body), so a stalled upload
//! holds its connection and its spool file that long at most.

use bytes::Bytes;
use http_body::Body as _;
use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// A request body being received.
pub struct RequestBody {
    inner: Inner,
    /// Longest wait for the next piece.
    timeout: Duration,
    /// Bytes handed on so far.
    received: u64,
}

enum Inner {
    H1(hyper::body::Incoming),
    H2(h2::RecvStream),
    /// A body known to be empty (tests).
    #[cfg(test)]
    Empty,
}

/// Why a body ended before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// No byte for the body timeout.
    Stalled(Duration),
    /// The client closed, reset the stream, or broke the framing.
    Broken(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Stalled(d) => write!(
                f,
                "the client sent no byte of the body for {} (--body-timeout)",
                humantime::format_duration(*d)
            ),
            BodyError::Broken(why) => write!(f, "the body was cut off: {why}"),
        }
    }
}

impl RequestBody {
    pub(super) fn h1(body: hyper::body::Incoming, timeout: Duration) -> RequestBody {
        RequestBody {
            inner: Inner::H1(body),
            timeout,
            received: 0,
        }
    }

    pub(super) fn h2(body: h2::RecvStream, timeout: Duration) -> RequestBody {
        RequestBody {
            inner: Inner::H2(body),
            timeout,
            received: 0,
        }
    }

    /// A body with nothing in it.
    #[cfg(test)]
    pub(crate) fn empty() -> RequestBody {
        RequestBody {
            inner: Inner::Empty,
            timeout: Duration::from_secs(1),
            received: 0,
        }
    }

    /// Bytes received so far.
    pub(crate) fn received(&self) -> u64 {
        self.received
    }

    /// The next piece, None at the body's end; an error when the client
    /// sends nothing for the body timeout or the body is cut off.
    pub(crate) async fn next(&mut self) -> Option<Result<Bytes, BodyError>> {
        let timeout = self.timeout;
        let piece = tokio::time::timeout(timeout, poll_fn(|cx| self.poll_piece(cx))).await;
        match piece {
            Err(_) => Some(Err(BodyError::Stalled(timeout))),
            Ok(Some(Ok(bytes))) => {
                self.received += bytes.len() as u64;
                Some(Ok(bytes))
            }
            Ok(other) => other,
        }
    }

    fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> {
        loop {
            match &mut self.inner {
                #[cfg(test)]
                Inner::Empty => return Poll::Ready(None),
                Inner::H1(body) => {
                    let frame = match Pin::new(&mut *body).poll_frame(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(None) => return Poll::Ready(None),
                        Poll::Ready(Some(Err(e))) => {
                            return Poll::Ready(Some(Err(BodyError::Broken(e.to_string()))));
                        }
                        Poll::Ready(Some(Ok(frame))) => frame,
                    };
                    // Trailers are not read.
                    match frame.into_data() {
                        Ok(data) if !data.is_empty() => return Poll::Ready(Some(Ok(data))),
                        _ => continue,
                    }
                }
                Inner::H2(body) => match body.poll_data(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(None) => return Poll::Ready(None),
                    Poll::Ready(Some(Err(e))) => {
                        return Poll::Ready(Some(Err(BodyError::Broken(e.to_string()))));
                    }
                    Poll::Ready(Some(Ok(data))) => {
                        // The window is given back for what is handed on:
                        // the client may send the next piece meanwhile.
                        let _ = body.flow_control().release_capacity(data.len());
                        if data.is_empty() {
                            continue;
                        }
                        return Poll::Ready(Some(Ok(data)));
                    }
                },
            }
        }
    }
}
