use std::net::SocketAddr;

use super::*;

fn allow(entries: &[&str]) -> Network {
    Network::Allow(Allowlist { entries: entries.iter().map(|e| AllowEntry::parse(e).unwrap()).collect(), listen: false })
}

fn target(text: &str) -> Target {
    Target::parse(text).unwrap()
}

fn addr(text: &str) -> SocketAddr {
    text.parse().unwrap()
}

fn list() -> Network {
    allow(&["api.example.com:443", "*.pypi.org:443", "10.1.2.3:5432", "127.0.0.1:8080"])
}

#[test]
fn a_listed_host_and_port_pass() {
    assert_eq!(list().check_target(&target("api.example.com:443")), Ok(()));
    assert_eq!(list().check_target(&target("files.pypi.org:443")), Ok(()));
    assert_eq!(list().check_target(&target("a.b.pypi.org:443")), Ok(()));
    assert_eq!(list().check_address(Some("api.example.com"), addr("93.184.215.14:443")), Ok(()));
    assert_eq!(list().check_address(None, addr("10.1.2.3:5432")), Ok(()));
}

#[test]
fn another_host_is_refused_with_the_list() {
    assert_eq!(
        list().check_target(&target("evil.example:443")).unwrap_err().to_string(),
        "Cannot connect to 'evil.example:443': host not in the network allowlist.\n\
         Allowed hosts: api.example.com:443, *.pypi.org:443, 10.1.2.3:5432, 127.0.0.1:8080"
    );
}

#[test]
fn the_same_host_on_another_port_is_refused() {
    let e = list().check_target(&target("api.example.com:80")).unwrap_err();
    assert_eq!(e.reason, RefusalReason::NotListed);
    assert_eq!(e.target, "api.example.com:80");
    assert!(list().check_address(None, addr("10.1.2.3:5433")).is_err());
}

#[test]
fn a_wildcard_never_matches_the_bare_domain() {
    assert!(list().check_target(&target("pypi.org:443")).is_err());
    assert!(list().check_target(&target("evilpypi.org:443")).is_err());
    assert!(list().check_target(&target("pypi.org.evil.com:443")).is_err());
}

#[test]
fn a_listed_name_resolving_to_loopback_or_metadata_is_refused() {
    assert_eq!(
        list().check_address(Some("api.example.com"), addr("127.0.0.1:443")).unwrap_err().to_string(),
        "Cannot connect to 'api.example.com:443': the name resolves to 127.0.0.1, a loopback address, \
         which the network allowlist does not include.\n\
         Allowed hosts: api.example.com:443, *.pypi.org:443, 10.1.2.3:5432, 127.0.0.1:8080"
    );
    let e = list().check_address(Some("x.pypi.org"), addr("169.254.169.254:443")).unwrap_err();
    assert_eq!(e.reason, RefusalReason::ResolvesTo { address: "169.254.169.254".parse().unwrap(), kind: "a link-local address" });
    let e = list().check_address(Some("api.example.com"), addr("[::ffff:10.0.0.1]:443")).unwrap_err();
    assert_eq!(e.reason, RefusalReason::ResolvesTo { address: "10.0.0.1".parse().unwrap(), kind: "a private address" });
}

#[test]
fn a_listed_name_may_resolve_to_a_listed_private_address() {
    let net = allow(&["db.internal.example:5432", "10.0.0.0/8:5432"]);
    assert_eq!(net.check_address(Some("db.internal.example"), addr("10.9.8.7:5432")), Ok(()));
    assert!(net.check_address(Some("db.internal.example"), addr("192.168.0.1:5432")).is_err());
}

#[test]
fn localhost_stands_for_both_loopback_addresses_and_nothing_else() {
    let net = allow(&["localhost:8080"]);
    assert_eq!(net.check_address(Some("localhost"), addr("127.0.0.1:8080")), Ok(()));
    assert_eq!(net.check_address(Some("localhost"), addr("[::1]:8080")), Ok(()));
    assert_eq!(net.check_address(None, addr("127.0.0.1:8080")), Ok(()));
    assert!(net.check_address(None, addr("127.0.0.2:8080")).is_err());
    assert!(net.check_address(Some("localhost"), addr("93.184.215.14:8080")).is_err());
    assert!(net.check_address(Some("localhost"), addr("127.0.0.1:8081")).is_err());
}

#[test]
fn an_empty_list_refuses_everything() {
    let net = allow(&[]);
    assert_eq!(
        net.check_target(&target("api.example.com:443")).unwrap_err().to_string(),
        "Cannot connect to 'api.example.com:443': host not in the network allowlist.\nAllowed hosts: none"
    );
    assert!(!net.may_look_up(&Host::Name("api.example.com".into())));
}

#[test]
fn network_off_says_so_and_network_on_passes() {
    assert_eq!(
        Network::Off.check_target(&target("a.com:1")).unwrap_err().to_string(),
        "Cannot connect to 'a.com:1': network access is disabled for this sandbox."
    );
    assert_eq!(Network::Full.check_address(Some("a.com"), addr("127.0.0.1:1")), Ok(()));
}

#[test]
fn only_names_the_list_could_admit_are_looked_up() {
    assert!(list().may_look_up(&Host::Name("api.example.com".into())));
    assert!(list().may_look_up(&Host::Name("x.pypi.org".into())));
    assert!(!list().may_look_up(&Host::Name("pypi.org".into())));
    assert!(!list().may_look_up(&Host::Name("evil.example".into())));
}

#[test]
fn a_malformed_host_is_refused_with_its_bytes_escaped() {
    let why = Target::parse("evil\0.com:443").unwrap_err();
    assert_eq!(
        list().malformed("evil\0.com:443", why).to_string(),
        "Cannot connect to 'evil\\0.com:443': 'evil\\0.com' is not a host name: use letters, digits, '-' and '.'.\n\
         Allowed hosts: api.example.com:443, *.pypi.org:443, 10.1.2.3:5432, 127.0.0.1:8080"
    );
}

#[test]
fn a_child_may_narrow_but_not_widen() {
    let parent = allow(&["api.example.com:443", "*.pypi.org:443", "10.0.0.0/8:5432", "localhost:8080"]);
    assert_eq!(parent.narrows_to(&allow(&["api.example.com:443", "files.pypi.org:443", "*.x.pypi.org:443"])), Ok(()));
    assert_eq!(parent.narrows_to(&allow(&["10.1.0.0/16:5432", "127.0.0.1:8080", "[::1]:8080"])), Ok(()));
    assert_eq!(parent.narrows_to(&Network::Off), Ok(()));
    assert_eq!(parent.narrows_to(&allow(&["api.example.com:80"])), Err("network access to 'api.example.com:80'".into()));
    assert_eq!(parent.narrows_to(&allow(&["pypi.org:443"])), Err("network access to 'pypi.org:443'".into()));
    assert_eq!(parent.narrows_to(&allow(&["10.0.0.0/7:5432"])), Err("network access to '10.0.0.0/7:5432'".into()));
    assert_eq!(parent.narrows_to(&allow(&["127.0.0.2:8080"])), Err("network access to '127.0.0.2:8080'".into()));
    assert_eq!(parent.narrows_to(&Network::Full), Err("all network access".into()));
    assert_eq!(Network::Off.narrows_to(&allow(&["a.com:1"])), Err("network access to 'a.com:1'".into()));
    assert_eq!(Network::Off.narrows_to(&allow(&[])), Ok(()));
    assert_eq!(Network::Full.narrows_to(&allow(&["a.com:1"])), Ok(()));
    let listening = Network::Allow(Allowlist { entries: vec![], listen: true });
    assert_eq!(parent.narrows_to(&listening), Err("listening sockets".into()));
}
