//! A load request's answer as a stream of bytes, whichever client sent it: reading it to its
//! end, quoting its start, draining it. The limits are the outbound policy's
//! ([`crate::boundary::http`]).

use crate::boundary::http::ERROR_BODY_CAP;

/// A load request's answer, whichever client sent it (see `client::Lane`).
pub(crate) type Answer = http::Response<AnswerBody>;

/// A load answer's body: a stream of byte frames.
pub(crate) type AnswerBody =
    http_body_util::combinators::BoxBody<bytes::Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// The next bytes of `body`, skipping trailers; `None` at its end.
pub(crate) async fn next_bytes(
    body: &mut AnswerBody,
) -> Option<Result<bytes::Bytes, Box<dyn std::error::Error + Send + Sync>>> {
    use http_body_util::BodyExt;
    loop {
        match body.frame().await? {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    return Some(Ok(data));
                }
            }
            Err(e) => return Some(Err(e)),
        }
    }
}

/// The start of an error answer, at most [`ERROR_BODY_CAP`] bytes of it: what is quoted of a
/// failure never needs more, and the rest is not read.
pub(crate) async fn error_text(mut body: AnswerBody) -> String {
    let mut out = Vec::new();
    while let Some(Ok(chunk)) = next_bytes(&mut body).await {
        let room = ERROR_BODY_CAP - out.len();
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= ERROR_BODY_CAP {
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads a load answer's body to its end without keeping it, giving up past `cap` bytes:
/// its connection goes back to the pool only once the body is read.
pub(crate) async fn discard_capped(mut body: AnswerBody, cap: usize) {
    let mut read = 0;
    while let Some(Ok(chunk)) = next_bytes(&mut body).await {
        read += chunk.len();
        if read > cap {
            return;
        }
    }
}
