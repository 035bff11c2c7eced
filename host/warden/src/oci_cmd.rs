//! `warden pull` and `warden lock`, and the fetching of `oci://` components
//! for every command that loads one.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indexmap::IndexMap;
use warden_oci::{Digest, OciRef, Pulled, Puller, Request, Store};
use warden_policy::oci::{is_loopback_host, Lock, OciSource, PinnedBy, RegistrySettings, DEFAULT_MAX_SIZE, LOCK_FILE};
use warden_policy::ComponentSource;

use crate::cli::{CacheArgs, OciArgs, PullArgs, RegistryArgs};
use crate::exit::Failure;

/// Fetches components; a tag resolved once keeps its digest for the
/// fetcher's life (and the life of those it shares [`Resolved`] with), so
/// `warden mcp --watch` never follows a moved tag.
pub struct Fetcher {
    puller: Puller,
    resolved: Resolved,
}

/// The digest each tag had when first resolved.
pub type Resolved = Arc<Mutex<HashMap<String, Digest>>>;

impl Fetcher {
    /// `policy_registries`: a policy's `registries:`, under the flags'.
    pub fn new(args: &RegistryArgs, cache: Option<&CacheArgs>, policy_registries: Option<&IndexMap<String, RegistrySettings>>) -> Result<Fetcher, Failure> {
        let mut registries = policy_registries.cloned().unwrap_or_default();
        for registry in &args.insecure_registries {
            let host = OciRef::parse(&format!("oci://{registry}/x:x")).map_err(|_| Failure::usage(format!("--insecure-registry: '{registry}' is not HOST:PORT")))?;
            if !is_loopback_host(host.host()) {
                return Err(Failure::usage(format!("--insecure-registry {registry}: plain HTTP is allowed only for a loopback registry")));
            }
            registries.insert(registry.clone(), RegistrySettings { insecure: true });
        }
        let store = match cache {
            Some(cache) if cache.no_cache => None,
            Some(CacheArgs { cache_dir: Some(dir), .. }) => Some(Store::in_cache(dir)),
            _ => warden_wasm::default_cache_dir().map(|dir| Store::in_cache(&dir)),
        };
        if args.offline && store.is_none() {
            return Err(Failure::usage("--offline reads the cache; it cannot be used with --no-cache"));
        }
        // The Docker config is read only when a registry is asked: a policy of
        // files, or a cached component, never depends on it.
        let puller = Puller {
            registries,
            registry_config: args.registry_config.clone(),
            offline: args.offline,
            timeout: Duration::from_secs(args.registry_timeout.max(1)),
            store,
        };
        Ok(Fetcher { puller, resolved: Resolved::default() })
    }

    pub fn remembering(self, resolved: Resolved) -> Fetcher {
        Fetcher { resolved, ..self }
    }

    pub fn pull(&self, request: &Request) -> Result<Pulled, String> {
        let tagged = request.reference.tagged().filter(|_| request.pin.is_none() && request.reference.digest.is_none());
        let mut request = request.clone();
        if let Some(tagged) = &tagged {
            request.pin = self.resolved.lock().expect("not poisoned").get(tagged).cloned();
        }
        let pulled = self.puller.pull(&request)?;
        if let Some(tagged) = tagged {
            self.resolved.lock().expect("not poisoned").insert(tagged, pulled.manifest.clone());
        }
        Ok(pulled)
    }

    /// A policy's component: the file's bytes, or the artifact's, checked.
    pub fn fetch(&self, source: &ComponentSource) -> Result<Vec<u8>, String> {
        match source {
            ComponentSource::File(path) => std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display())),
            ComponentSource::Oci(oci) => self.pull(&request_of(oci)).map(|p| p.bytes),
        }
    }
}

pub fn request_of(oci: &OciSource) -> Request {
    Request { reference: oci.reference.clone(), pin: oci.pin.clone(), verify_keys: oci.verify_keys.clone(), max_size: oci.max_size }
}

/// A component named on the command line: `oci://...`, or `None` for a file.
/// A tag alone is run only under --verify-key.
pub fn command_line_request(component: &Path, args: &OciArgs) -> Result<Option<Request>, Failure> {
    let request = reference_request(component, args)?;
    if let Some(request) = &request
        && request.reference.digest.is_none()
        && args.verify_keys.is_empty()
    {
        return Err(Failure::usage(format!(
            "'{}' names a tag without a digest: name the digest (@sha256:...; `warden pull` shows it), \
             or give --verify-key to accept what its signer signed",
            request.reference
        )));
    }
    Ok(request)
}

fn reference_request(component: &Path, args: &OciArgs) -> Result<Option<Request>, Failure> {
    let Some(text) = component.to_str().filter(|t| OciRef::is_oci(t)) else {
        if !args.verify_keys.is_empty() || args.max_size.is_some() {
            return Err(Failure::usage("--verify-key and --max-size apply to an oci:// component"));
        }
        return Ok(None);
    };
    let reference = OciRef::parse(text).map_err(Failure::usage)?;
    let max_size = match &args.max_size {
        None => DEFAULT_MAX_SIZE,
        Some(size) => warden_policy::parse_size(size).map_err(|e| Failure::usage(format!("--max-size: {e}")))?,
    };
    Ok(Some(Request { reference, pin: None, verify_keys: args.verify_keys.clone(), max_size }))
}

/// The bytes of a component named on the command line, with a policy's registries when one is given.
pub fn command_line_component(component: &Path, args: &OciArgs, cache: &CacheArgs, policy: Option<&Path>) -> Result<Option<Vec<u8>>, Failure> {
    let Some(request) = command_line_request(component, args)? else { return Ok(None) };
    let registries = policy.map(warden_policy::load).transpose()?.map(|p| p.registries);
    let fetcher = Fetcher::new(&args.registry, Some(cache), registries.as_ref())?;
    let pulled = fetcher.pull(&request).map_err(|e| cannot_pull(&request.reference, e))?;
    Ok(Some(pulled.bytes))
}

fn cannot_pull(reference: &OciRef, why: String) -> Failure {
    Failure { status: Failure::FAILED, message: format!("warden: cannot pull {reference}: {why}") }
}

pub fn pull(args: &PullArgs) -> Result<(), Failure> {
    let path = Path::new(&args.reference);
    if !OciRef::is_oci(&args.reference) {
        return Err(Failure::usage(format!("'{}' is not an OCI reference: write oci://REGISTRY/REPOSITORY@sha256:HEX", args.reference)));
    }
    // Pulling a tag is how its digest is found; loading one needs the digest or a key.
    let request = reference_request(path, &args.oci)?.expect("an oci:// reference");
    let registries = args.policy.as_deref().map(warden_policy::load).transpose()?.map(|p| p.registries);
    let fetcher = Fetcher::new(&args.oci.registry, Some(&args.cache), registries.as_ref())?;
    let pulled = fetcher.pull(&request).map_err(|e| cannot_pull(&request.reference, e))?;
    print!("{}", report(&pulled));
    Ok(())
}

fn report(pulled: &Pulled) -> String {
    let mut out = format!("pulled {}\n", pulled.reference);
    let _ = writeln!(out, "  manifest   {}", pulled.manifest);
    let _ = writeln!(out, "  component  {}", pulled.layer);
    let _ = writeln!(out, "  blake3     blake3:{}", pulled.blake3);
    let _ = writeln!(out, "  size       {} bytes", pulled.bytes.len());
    match &pulled.signature {
        Some(v) => {
            let key = v.key.file_name().map_or_else(|| v.key.display().to_string(), |n| n.to_string_lossy().into_owned());
            let _ = writeln!(out, "  signature  verified: {key} ({}) signed {}", v.fingerprint, pulled.manifest);
        }
        None => out.push_str("  signature  not checked (no --verify-key)\n"),
    }
    out
}

pub fn lock(policy_file: &Path, registry: &RegistryArgs) -> Result<(), Failure> {
    if registry.offline {
        return Err(Failure::usage("warden lock asks the registries; it cannot be used with --offline"));
    }
    let policy = warden_policy::load_to_lock(policy_file)?;
    let fetcher = Fetcher::new(registry, None, Some(&policy.registries))?;
    // A lock that cannot be read is replaced: moving pins is what this command is for.
    let old = Lock::beside(&policy.file).unwrap_or_else(|e| {
        eprintln!("warden: replacing a lock that cannot be read: {e}");
        Lock::default()
    });
    // Rebuilt from the policy's tags: a pin for a tag no longer named goes.
    let mut lock = Lock::default();
    let mut lines = String::new();
    for decl in policy.tools.values() {
        let ComponentSource::Oci(oci) = &decl.component else { continue };
        let Some(tagged) = oci.reference.tagged() else { continue };
        if oci.reference.digest.is_some() {
            continue;
        }
        // A pin is moved on purpose: the tag is resolved afresh.
        let request = Request { pin: None, ..request_of(oci) };
        let pulled = fetcher.puller.pull(&request).map_err(|e| Failure { status: Failure::FAILED, message: format!("warden: cannot lock tools.{}: {tagged}: {e}", decl.key) })?;
        let moved = match (oci.pinned_by, old.pins.get(&tagged)) {
            (PinnedBy::Lock, Some(was)) if *was != pulled.manifest => format!(" (was {was})"),
            _ => String::new(),
        };
        let _ = writeln!(lines, "pinned {tagged} -> {}{moved}", pulled.manifest);
        lock.pins.insert(tagged, pulled.manifest);
    }
    let file = policy.file.with_file_name(LOCK_FILE);
    write_atomically(&file, &lock.render()).map_err(|e| Failure { status: Failure::FAILED, message: format!("warden: cannot write {}: {e}", file.display()) })?;
    if lines.is_empty() {
        lines.push_str("no tags to pin: every oci:// component names its digest\n");
    }
    print!("{lines}");
    println!("wrote {}", file.display());
    Ok(())
}

fn write_atomically(file: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let mut temp = tempfile::NamedTempFile::new_in(file.parent().unwrap_or(Path::new(".")))?;
    // Read like the policy beside it, by whoever reads that.
    temp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    temp.persist(file).map_err(|e| e.error)?;
    Ok(())
}
