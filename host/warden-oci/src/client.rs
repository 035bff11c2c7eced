//! One repository of one registry, spoken to as the distribution spec says:
//! manifests, blobs and referrers, with Basic or Bearer authentication.

use http::header::{HeaderValue, ACCEPT, AUTHORIZATION, WWW_AUTHENTICATE};
use http::StatusCode;
use warden_policy::oci::Digest;

use crate::challenge::Challenge;
use crate::credentials::Basic;
use crate::http::url::{encode, Url};
use crate::http::{Fetched, Http, Limit, Reach};
use crate::media;

/// A manifest or index is JSON of a few KiB; 4 MiB is far beyond any real one.
pub const MANIFEST_MAX: u64 = 4 << 20;
/// A token response.
const TOKEN_MAX: u64 = 64 << 10;

pub struct Client {
    http: Http,
    https: bool,
    registry: String,
    repository: String,
    basic: Option<Basic>,
    authorization: Option<HeaderValue>,
}

impl Client {
    pub fn new(http: Http, https: bool, registry: &str, repository: &str, basic: Option<Basic>) -> Client {
        Client { http, https, registry: registry.to_owned(), repository: repository.to_owned(), basic, authorization: None }
    }

    /// The manifest a tag or digest names, or `None` when the registry has none.
    pub async fn manifest(&mut self, reference: &str) -> Result<Option<Fetched>, String> {
        let path = format!("/v2/{}/manifests/{reference}", self.repository);
        let fetched = self.get(&path, Some(media::MANIFEST_ACCEPT), Limit::AtMost { max: MANIFEST_MAX, what: "the manifest" }).await?;
        match fetched.status {
            StatusCode::NOT_FOUND => Ok(None),
            status if status.is_success() => Ok(Some(fetched)),
            status => Err(self.unexpected(status, &path)),
        }
    }

    /// The blob with `digest`, exactly `size` bytes that hash to it.
    pub async fn blob(&mut self, digest: &Digest, size: u64, what: &'static str) -> Result<Vec<u8>, String> {
        let path = format!("/v2/{}/blobs/{digest}", self.repository);
        let fetched = self.get(&path, None, Limit::Exactly { size, what }).await?;
        if !fetched.status.is_success() {
            return Err(self.unexpected(fetched.status, &path));
        }
        let actual = crate::sha256(&fetched.body);
        if actual != *digest {
            return Err(format!("{what}'s bytes have digest {actual}, not {digest} as the manifest says"));
        }
        Ok(fetched.body)
    }

    /// The OCI 1.1 referrers of `digest` of one artifact type, or `None`
    /// when the registry has no referrers API.
    pub async fn referrers(&mut self, digest: &Digest, artifact_type: &str) -> Result<Option<Vec<u8>>, String> {
        let path = format!("/v2/{}/referrers/{digest}?artifactType={}", self.repository, encode(artifact_type));
        let accept = Some("application/vnd.oci.image.index.v1+json");
        let fetched = self.get(&path, accept, Limit::AtMost { max: MANIFEST_MAX, what: "the referrers index" }).await?;
        match fetched.status {
            StatusCode::NOT_FOUND => Ok(None),
            status if status.is_success() => Ok(Some(fetched.body)),
            status => Err(self.unexpected(status, &path)),
        }
    }

    fn url(&self, path: &str) -> Url {
        Url::new(self.https, &self.registry, path.to_owned())
    }

    /// A plain-HTTP registry is reached on this host only, whatever its name resolves to.
    fn reach(&self) -> Reach {
        if self.https { Reach::Any } else { Reach::Loopback }
    }

    async fn get(&mut self, path: &str, accept: Option<&'static str>, limit: Limit) -> Result<Fetched, String> {
        let mut answered = false;
        loop {
            let mut headers = http::HeaderMap::new();
            if let Some(accept) = accept {
                headers.insert(ACCEPT, HeaderValue::from_static(accept));
            }
            if let Some(authorization) = &self.authorization {
                headers.insert(AUTHORIZATION, authorization.clone());
            }
            let url = self.url(path);
            let fetched = self.http.get(&url, &headers, limit, self.reach()).await?;
            if fetched.status != StatusCode::UNAUTHORIZED || answered {
                return Ok(fetched);
            }
            // Only the registry's own challenge is met: a host it redirected
            // to could otherwise name a token service and get the credentials.
            if !fetched.url.same_origin(&url) {
                return Err(format!(
                    "{} (a redirect target) asked for credentials (401 Unauthorized): refused; Warden answers only its registry's challenges",
                    fetched.url.shown()
                ));
            }
            let challenge = fetched.headers.get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or("");
            self.authorization = Some(self.answer(challenge).await?);
            answered = true;
        }
    }

    /// The Authorization that meets a challenge: the configured credentials,
    /// or a token from the registry's token service.
    async fn answer(&self, challenge: &str) -> Result<HeaderValue, String> {
        match Challenge::parse(challenge)? {
            Challenge::Basic => {
                let basic = self.basic.as_ref().ok_or_else(|| self.no_credentials())?;
                HeaderValue::from_str(&basic.header()).map_err(|_| "the credentials are not a valid header".to_owned())
            }
            Challenge::Bearer { realm, service, .. } => self.token(&realm, service.as_deref()).await,
        }
    }

    async fn token(&self, realm: &str, service: Option<&str>) -> Result<HeaderValue, String> {
        let registry = self.url("/");
        let mut url = registry.join(realm).map_err(|e| format!("the registry's token service: {e}"))?;
        let same_origin = url.same_origin(&registry);
        if !url.https && !same_origin {
            return Err(format!("the registry's token service {} is another host over plain HTTP: refused", url.shown()));
        }
        let reach = if same_origin { self.reach() } else { Reach::Public("the registry's token service is") };
        let scope = format!("repository:{}:pull", self.repository);
        let mut query = format!("scope={}", encode(&scope));
        if let Some(service) = service {
            query = format!("service={}&{query}", encode(service));
        }
        let separator = if url.path_and_query.contains('?') { '&' } else { '?' };
        url.path_and_query = format!("{}{separator}{query}", url.path_and_query);
        let mut headers = http::HeaderMap::new();
        if let Some(basic) = &self.basic {
            headers.insert(AUTHORIZATION, HeaderValue::from_str(&basic.header()).map_err(|_| "the credentials are not a valid header")?);
        }
        let fetched = self.http.get(&url, &headers, Limit::AtMost { max: TOKEN_MAX, what: "the token" }, reach).await?;
        if fetched.status == StatusCode::UNAUTHORIZED {
            return Err(self.refused());
        }
        if !fetched.status.is_success() {
            return Err(format!("the registry's token service answered {}", fetched.status));
        }
        #[derive(serde::Deserialize)]
        struct TokenResponse {
            token: Option<String>,
            access_token: Option<String>,
        }
        let response: TokenResponse = serde_json::from_slice(&fetched.body).map_err(|e| format!("the registry's token is not JSON: {}", crate::shown(&e.to_string())))?;
        let token = response.token.or(response.access_token).filter(|t| !t.is_empty()).ok_or("the registry's token service gave no token")?;
        HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| "the registry's token is not a valid header".to_owned())
    }

    fn unexpected(&self, status: StatusCode, path: &str) -> String {
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return self.refused();
        }
        format!("the registry answered {status} for {path}")
    }

    fn refused(&self) -> String {
        match self.basic {
            Some(_) => format!("the registry refused the credentials for {} (401 Unauthorized)", self.registry),
            None => self.no_credentials(),
        }
    }

    fn no_credentials(&self) -> String {
        format!(
            "the registry {} asks for credentials (401 Unauthorized); give them in the Docker config (`docker login`, or --registry-config)",
            self.registry
        )
    }
}
