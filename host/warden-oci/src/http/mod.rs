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

pub struct Http {
    tls: Arc<rustls::ClientConfig>,
    timeout: Duration,
}

pub struct Fetched {
    pub status: http::StatusCode,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl Http {
    pub fn new(timeout: Duration) -> Http {
        Http { tls: connect::tls_config(), timeout }
    }

    /// GETs `url`, following redirects, within the deadline. A success's body
    /// is read under `limit`; another answer's only for its message.
    /// With `public_only`, even `url` itself must be on a public address.
    pub async fn get(&self, url: &Url, headers: &http::HeaderMap, limit: Limit, public_only: bool) -> Result<Fetched, String> {
        let seconds = self.timeout.as_secs_f64();
        tokio::time::timeout(self.timeout, self.follow(url, headers, limit, public_only))
            .await
            .unwrap_or_else(|_| Err(format!("the registry did not answer within {seconds} s")))
    }

    async fn follow(&self, url: &Url, headers: &http::HeaderMap, limit: Limit, mut public_only: bool) -> Result<Fetched, String> {
        let mut url = url.clone();
        let mut headers = headers.clone();
        // Once redirected elsewhere, only public addresses: the registry may
        // not send this host to a service the registry itself cannot reach.
        for _ in 0..=MAX_REDIRECTS {
            let response = connect::get(&self.tls, &url, &headers, public_only).await?;
            let status = response.status();
            if status.is_redirection() && status != http::StatusCode::NOT_MODIFIED {
                let location = response
                    .headers()
                    .get(http::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .ok_or_else(|| format!("the registry redirected ({status}) without a usable Location"))?;
                let next = url.join(location)?;
                if !next.same_origin(&url) {
                    check_redirect(&next)?;
                    // Credentials are the registry's; another origin never sees them.
                    headers.remove(http::header::AUTHORIZATION);
                    public_only = true;
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
            return Ok(Fetched { status, headers, body });
        }
        Err(format!("the registry redirected more than {MAX_REDIRECTS} times"))
    }
}

/// Another origin only over HTTPS.
fn check_redirect(next: &Url) -> Result<(), String> {
    if !next.https {
        return Err(format!("the registry redirected to {next}: another host over plain HTTP is refused"));
    }
    Ok(())
}
