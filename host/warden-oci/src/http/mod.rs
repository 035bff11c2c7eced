//! GET requests to a registry: a deadline over the whole exchange, capped
//! bodies, and redirects followed only where they cannot reach what the
//! registry could not.

mod body;
mod connect;
pub mod url;

use std::sync::Arc;
use std::time::Duration;

pub use body::Limit;
use url::Url;

/// Redirects followed for one request, at most.
const MAX_REDIRECTS: usize = 5;
/// What is read of an answer that is not a success, for its message.
const ERROR_BODY_MAX: u64 = 16 << 10;

/// Which addresses a request may connect to, checked on each address
/// a name resolves to, before connecting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    Any,
    /// A plain-HTTP registry: this host only.
    Loopback,
    /// Another origin a registry sent Warden to: the public internet only.
    /// The text names how it did, for the refusal.
    Public(&'static str),
}

pub struct Http {
    tls: Arc<rustls::ClientConfig>,
    timeout: Duration,
}

pub struct Fetched {
    pub status: http::StatusCode,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
    /// Where the answer came from, after redirects.
    pub url: Url,
}

impl Http {
    pub fn new(timeout: Duration) -> Http {
        Http { tls: connect::tls_config(), timeout }
    }

    /// GETs `url`, following redirects, within the deadline. A success's body
    /// is read under `limit`; another answer's only for its message.
    pub async fn get(&self, url: &Url, headers: &http::HeaderMap, limit: Limit, reach: Reach) -> Result<Fetched, String> {
        let seconds = self.timeout.as_secs_f64();
        tokio::time::timeout(self.timeout, self.follow(url, headers, limit, reach))
            .await
            .unwrap_or_else(|_| Err(format!("the registry did not answer within {seconds} s")))
    }

    async fn follow(&self, url: &Url, headers: &http::HeaderMap, limit: Limit, mut reach: Reach) -> Result<Fetched, String> {
        let mut url = url.clone();
        let mut headers = headers.clone();
        for _ in 0..=MAX_REDIRECTS {
            let response = connect::get(&self.tls, &url, &headers, reach).await?;
            let status = response.status();
            if status.is_redirection() && status != http::StatusCode::NOT_MODIFIED {
                let location = response
                    .headers()
                    .get(http::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .ok_or_else(|| format!("the registry redirected ({status}) without a usable Location"))?;
                let next = url.join(location)?;
                if !next.same_origin(&url) {
                    if !next.https {
                        return Err(format!("the registry redirected to {}: another host over plain HTTP is refused", next.shown()));
                    }
                    // Credentials are the registry's; another origin never sees them,
                    // and it may not be this host or its network.
                    headers.remove(http::header::AUTHORIZATION);
                    reach = Reach::Public("the registry redirected to");
                }
                url = next;
                continue;
            }
            let headers = response.headers().clone();
            let length = headers.get(http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
            let body = if status.is_success() {
                body::read(response.into_body(), length, limit).await?
            } else {
                body::read(response.into_body(), None, Limit::AtMost { max: ERROR_BODY_MAX, what: "the error" }).await.unwrap_or_default()
            };
            return Ok(Fetched { status, headers, body, url });
        }
        Err(format!("the registry redirected more than {MAX_REDIRECTS} times"))
    }
}
