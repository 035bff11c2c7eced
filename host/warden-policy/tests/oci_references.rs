//! `oci://` components in a policy: references parsed strictly, a tag only
//! when a lock pins it or `verify` checks it, plain HTTP for loopback only.

use std::fs;

use tempfile::TempDir;
use warden_policy::oci::{Lock, OciRef, PinnedBy};
use warden_policy::ComponentSource;

const DIGEST: &str = "sha256:3b13b71962bbbba4c32c7be222714e00c22e9e790fada8f293bd821d64e7aaf0";
const OTHER: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

struct Dir(TempDir);

impl Dir {
    fn new() -> Dir {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("data")).unwrap();
        fs::write(d.path().join("acme.pub"), "a key").unwrap();
        Dir(d)
    }

    fn check(&self, tools: &str) -> Result<warden_policy::Policy, String> {
        let file = self.0.path().join("policy.yaml");
        fs::write(&file, format!("version: 1\nsandbox:\n  paths:\n    data: {{ root: ./data }}\n{tools}")).unwrap();
        warden_policy::load(&file).map_err(|e| e.to_string().strip_prefix(&file.display().to_string()).unwrap().to_owned())
    }

    fn lock(&self, text: &str) {
        fs::write(self.0.path().join("warden.lock"), text).unwrap();
    }
}

fn oci(policy: &warden_policy::Policy, key: &str) -> warden_policy::oci::OciSource {
    match &policy.tools[key].component {
        ComponentSource::Oci(oci) => oci.clone(),
        ComponentSource::File(path) => panic!("{key} is the file {}", path.display()),
    }
}

#[test]
fn references_name_a_registry_a_repository_and_a_tag_or_digest() {
    let r = OciRef::parse(&format!("oci://127.0.0.1:5000/tools/hello:v1@{DIGEST}")).unwrap();
    assert_eq!((r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()), ("127.0.0.1:5000", "tools/hello", Some("v1")));
    assert_eq!(r.to_string(), format!("oci://127.0.0.1:5000/tools/hello:v1@{DIGEST}"));
    assert_eq!(r.tagged().as_deref(), Some("oci://127.0.0.1:5000/tools/hello:v1"));
    assert_eq!(OciRef::parse("oci://[::1]:5000/a:1").unwrap().host(), "::1");
    assert_eq!(OciRef::parse("oci://ghcr.io/acme/weather:1.2.0").unwrap().host(), "ghcr.io");
}

#[test]
fn a_reference_that_could_change_the_url_it_becomes_is_refused() {
    let cases = [
        ("oci://r.io/a", "name a tag (:TAG) or a digest (@sha256:...)"),
        ("https://r.io/a:1", "it must start with oci://"),
        ("oci://r.io/../etc:1", "'../etc' is not a repository"),
        ("oci://r.io/a/./b:1", "'a/./b' is not a repository"),
        ("oci://r.io/A:1", "'A' is not a repository"),
        ("oci://r.io/a?x=1:1", "'a?x=1' is not a repository"),
        ("oci://r.io/a:1/../../x", "'1/../../x' is not a tag"),
        ("oci://user@r.io/a:1", "not a sha256 digest"),
        ("oci://r.io/a@sha512:abcd", "'sha512:abcd' is not a sha256 digest"),
        ("oci://r.io/a@sha256:ABC", "'sha256:ABC' is not a digest"),
        ("oci://r.io/a:-x", "'-x' is not a tag"),
        ("oci://r.io/a:v\u{0}1", "is not a tag"),
        ("oci://r.io:99999/a:1", "'99999' is not a port"),
        ("oci://r io/a:1", "'r io' is not a registry host"),
        ("oci://r.io#x/a:1", "is not a registry host"),
        ("oci:///a:1", "'' is not a registry host"),
    ];
    for (text, why) in cases {
        let error = OciRef::parse(text).unwrap_err();
        assert!(error.contains(why), "{text}: {error}");
    }
}

#[test]
fn a_digest_pins_a_component() {
    let d = Dir::new();
    let p = d.check(&format!("tools:\n  hello: {{ component: \"oci://ghcr.io/acme/hello@{DIGEST}\", max_size: 1MiB }}\n")).unwrap();
    let source = oci(&p, "hello");
    assert_eq!((source.pin.as_ref().unwrap().to_string(), source.pinned_by, source.max_size), (DIGEST.to_owned(), PinnedBy::Reference, 1 << 20));
    assert_eq!(source.trust_shown(), "pinned, unverified");
}

#[test]
fn a_tag_alone_is_refused_unless_a_lock_pins_it_or_verify_checks_it() {
    let d = Dir::new();
    let tools = "tools:\n  hello: { component: \"oci://ghcr.io/acme/hello:v1\" }\n";
    assert_eq!(
        d.check(tools).unwrap_err(),
        ":6:10: tools.hello.component: 'oci://ghcr.io/acme/hello:v1' names a tag without a digest; pin it with `warden lock`, write its @sha256: digest, or add verify:"
    );
    d.lock(&format!("version: 1\npins:\n  \"oci://ghcr.io/acme/hello:v1\": \"{DIGEST}\"\n"));
    let source = oci(&d.check(tools).unwrap(), "hello");
    assert_eq!((source.pin.unwrap().to_string(), source.pinned_by), (DIGEST.to_owned(), PinnedBy::Lock));
    let verified = d.check("tools:\n  hello: { component: \"oci://ghcr.io/acme/hello:v2\", verify: { keys: [./acme.pub] } }\n").unwrap();
    let source = oci(&verified, "hello");
    assert_eq!((source.pin, source.pinned_by, source.verify_keys), (None, PinnedBy::Nothing, vec![d.0.path().join("acme.pub")]));
    assert_eq!(oci(&verified, "hello").trust_shown(), "verified");
}

#[test]
fn a_lock_is_read_strictly_and_written_so_it_reads_back() {
    let mut lock = Lock::default();
    lock.pins.insert("oci://r.io/a:v1".into(), warden_policy::oci::Digest::parse(DIGEST).unwrap());
    assert_eq!(Lock::parse(&lock.render()).unwrap(), lock);
    assert!(Lock::parse(&format!("version: 1\npins:\n  \"oci://r.io/a@{OTHER}\": \"{DIGEST}\"\n")).unwrap_err().contains("a pin names a tag"));
    assert!(Lock::parse("version: 1\npins:\n  \"oci://r.io/a:v1\": \"sha256:12\"\n").unwrap_err().contains("is not a digest"));
    assert!(Lock::parse("version: 2\npins: {}\n").unwrap_err().contains("version 2"));
    assert!(Lock::parse("version: 1\nextra: 1\n").is_err());
}

#[test]
fn a_malformed_lock_is_an_invalid_policy_not_an_empty_lock() {
    let d = Dir::new();
    d.lock("version: 1\npins: [\n");
    let error = d.check(&format!("tools:\n  hello: {{ component: \"oci://ghcr.io/acme/hello@{DIGEST}\" }}\n")).unwrap_err();
    assert!(error.starts_with(": cannot read the lock: "), "{error}");
}

#[test]
fn plain_http_is_for_a_loopback_registry_only() {
    let d = Dir::new();
    let p = d.check("registries:\n  \"127.0.0.1:5000\": { insecure: true }\n  \"[::1]:5001\": { insecure: true }\n  localhost: { insecure: true }\n").unwrap();
    assert!(p.registries["127.0.0.1:5000"].insecure && p.registries["[::1]:5001"].insecure);
    for registry in ["ghcr.io", "10.0.0.5:5000", "127.0.0.1.nip.io:5000", "localhost.example"] {
        let error = d.check(&format!("registries:\n  \"{registry}\": {{ insecure: true }}\n")).unwrap_err();
        let column = registry.len() + 7;
        assert_eq!(error, format!(":6:{column}: registries.\"{registry}\".insecure: plain HTTP is allowed only for a loopback registry"));
    }
}

#[test]
fn verify_and_max_size_belong_to_registry_components() {
    let d = Dir::new();
    fs::write(d.0.path().join("tool.wasm"), "x").unwrap();
    let error = d.check("tools:\n  t: { component: ./tool.wasm, verify: { keys: [./acme.pub] } }\n").unwrap_err();
    assert_eq!(error, ":6:6: tools.t.verify: applies to an oci:// component only; a file is pinned by `digest`");
    let error = d.check("tools:\n  t: { component: \"oci://r.io/a:1\", verify: { keys: [./missing.pub] } }\n").unwrap_err();
    assert_eq!(error, ":6:6: tools.t.verify.keys: './missing.pub' is not a file");
    let error = d.check(&format!("tools:\n  t: {{ component: \"oci://r.io/a@{DIGEST}\", max_size: lots }}\n")).unwrap_err();
    assert!(error.starts_with(":6:6: tools.t.max_size: 'lots' is not a size"), "{error}");
}
