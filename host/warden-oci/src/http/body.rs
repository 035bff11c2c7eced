//! Reading a body with a cap: a document up to a limit, or a blob of the
//! exact size its descriptor gives. A body that lies is refused the moment
//! it does, never buffered past its limit.

use http_body_util::BodyExt;
use hyper::body::Incoming;

const RESERVE_MAX: u64 = 8 << 20;

/// How much of a body is accepted.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    /// At most `max` bytes of a JSON document.
    AtMost { max: u64, what: &'static str },
    /// Exactly `size` bytes, as a descriptor says.
    Exactly { size: u64, what: &'static str },
}

impl Limit {
    fn max(self) -> u64 {
        match self {
            Limit::AtMost { max, .. } => max,
            Limit::Exactly { size, .. } => size,
        }
    }

    fn over(self) -> String {
        match self {
            Limit::AtMost { max, what } => format!("{what} is larger than {max} bytes"),
            Limit::Exactly { size, what } => format!("{what} is longer than the {size} bytes the manifest says"),
        }
    }
}

pub async fn read(mut body: Incoming, content_length: Option<u64>, limit: Limit) -> Result<Vec<u8>, String> {
    if content_length.is_some_and(|n| n > limit.max()) {
        return Err(limit.over());
    }
    // What a header announces is not reserved beyond a few MiB: the body grows as it comes.
    let mut bytes = Vec::with_capacity(content_length.unwrap_or(0).min(limit.max()).min(RESERVE_MAX) as usize);
    while let Some(frame) = body.frame().await {
        let frame = match (frame, limit) {
            (Ok(frame), _) => frame,
            (Err(_), Limit::Exactly { size, what }) => return Err(short(what, bytes.len(), size)),
            (Err(e), Limit::AtMost { .. }) => return Err(format!("the registry's answer broke off: {e}")),
        };
        if let Ok(data) = frame.into_data() {
            if (bytes.len() + data.len()) as u64 > limit.max() {
                return Err(limit.over());
            }
            bytes.extend_from_slice(&data);
        }
    }
    if let Limit::Exactly { size, what } = limit
        && (bytes.len() as u64) < size
    {
        return Err(short(what, bytes.len(), size));
    }
    Ok(bytes)
}

fn short(what: &str, got: usize, size: u64) -> String {
    format!("{what} ended after {got} of the {size} bytes the manifest says")
}
